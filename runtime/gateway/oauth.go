package gateway

import (
	"fmt"
	"net/http"
	"os"

	"github.com/mcprt/mcprt/session/client/oauth"
)

// oauthClient is the HTTP client of a remote backend with an "oauth"
// block: its requests carry a client credentials token of the backend's
// authorization server, obtained on the backend's first 401 and renewed
// before it expires. One per backend, for all its connections: a
// reconnect keeps the token.
func (b *backend) oauthClient() (*http.Client, error) {
	b.authOnce.Do(func() {
		o := b.cfg.OAuth
		cfg := oauth.Config{
			Grant:           oauth.ClientCredentials,
			ClientIssuer:    o.Issuer,
			ClientID:        o.ClientID,
			ClientSecret:    o.ClientSecret,
			Scopes:          o.Scopes,
			MetadataOrigins: o.MetadataOrigins,
			AllowPrivate:    o.AllowPrivate,
			Logger:          b.g.log.With("backend", b.name),
		}
		if o.KeyFile != "" {
			pemData, err := os.ReadFile(o.KeyFile)
			if err != nil {
				b.authErr = fmt.Errorf("oauth keyFile: %w", err)
				return
			}
			if cfg.ClientKey, err = oauth.ParsePrivateKey(pemData); err != nil {
				b.authErr = fmt.Errorf("oauth keyFile %s: %w", o.KeyFile, err)
				return
			}
		}
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = 64 // as session/client's own transport
		cfg.Base = t
		a, err := oauth.New(b.cfg.URL, cfg)
		if err != nil {
			b.authErr = err
			return
		}
		b.auth = a.Client()
	})
	return b.auth, b.authErr
}
