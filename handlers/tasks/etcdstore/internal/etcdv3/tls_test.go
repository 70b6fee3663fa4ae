package etcdv3

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcprt/mcprt/test/etcdtest"
)

// Over https with a client certificate required: a client with the CA
// and a certificate is served; one without the certificate is refused.
func TestTLSClientCertificate(t *testing.T) {
	dir := t.TempDir()
	ca, caKey := certificate(t, nil, nil, "test ca", true)
	srv, srvKey := certificate(t, ca, caKey, "127.0.0.1", false)
	cli, cliKey := certificate(t, ca, caKey, "root", false)
	write := func(name string, der []byte, typ string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	keyDER := func(k *ecdsa.PrivateKey) []byte { b, _ := x509.MarshalECPrivateKey(k); return b }
	caFile := write("ca.pem", ca.Raw, "CERTIFICATE")
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	clientCert := tls.Certificate{Certificate: [][]byte{cli.Raw}, PrivateKey: cliKey}
	good := &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{clientCert}}
	cl := etcdtest.StartTLS(t, 1, etcdtest.TLS{
		CertFile: write("server.pem", srv.Raw, "CERTIFICATE"), KeyFile: write("server-key.pem", keyDER(srvKey), "EC PRIVATE KEY"),
		CAFile: caFile, Client: good,
	})
	ctx := context.Background()
	c, _ := New(Config{Endpoints: cl.Endpoints(), TLS: good, Timeout: time.Second})
	if _, err := c.Put(ctx, []byte("k"), []byte("v"), 0); err != nil {
		t.Fatalf("put over https with a client certificate: %v", err)
	}
	c.Close()
	nocert, _ := New(Config{Endpoints: cl.Endpoints(), TLS: &tls.Config{RootCAs: roots}, Timeout: time.Second})
	if _, err := nocert.Put(ctx, []byte("k"), []byte("v"), 0); err == nil {
		t.Fatal("put without a client certificate succeeded")
	}
	nocert.Close()
}

// certificate makes a certificate signed by parent (self-signed when nil).
func certificate(t *testing.T, parent *x509.Certificate, parentKey *ecdsa.PrivateKey, cn string, isCA bool) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IsCA:        isCA, BasicConstraintsValid: true}
	if !isCA {
		tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
	}
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return cert, key
}
