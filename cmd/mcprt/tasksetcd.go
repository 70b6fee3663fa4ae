package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/mcprt/mcprt/handlers/tasks/etcdstore"
	"github.com/mcprt/mcprt/runtime"
)

// etcdPasswordEnv holds the etcd user's password: a secret stays off the
// command line (ps shows it to every user).
const etcdPasswordEnv = "MCPRT_ETCD_PASSWORD"

// addTasksEtcdFlags adds the -tasks-etcd flags of mcprt serve and mcprt
// gateway; the function it returns, after parsing, sets to.Etcd when
// -tasks-etcd is given (an error for flags that do not go together).
func addTasksEtcdFlags(fs *flag.FlagSet, to *runtime.TasksOptions) func() error {
	endpoints := fs.String("tasks-etcd", "", "keep tasks in etcd at these comma-separated client `urls` (http://h1:2379,https://h2:2379), shared by every replica started with the same ones and the same -tasks-etcd-prefix: any replica answers for any task (get, result, cancel, list), and when a replica dies its running tasks are taken over by another once its hold runs out (-tasks-etcd-hold): a resumable tool's task is run again once, any other is failed saying its server was lost. Not with -tasks-dir")
	prefix := fs.String("tasks-etcd-prefix", "mcprt/tasks/", "the etcd key `prefix` of the tasks: one per deployment sharing them")
	hold := fs.Duration("tasks-etcd-hold", 10*time.Second, "ttl of a replica's lease on the tasks it runs: how long after it dies they are taken over (whole seconds)")
	timeout := fs.Duration("tasks-etcd-timeout", 2*time.Second, "bound of each request to one etcd member; a task call whose store does not answer gets an error naming it")
	ca := fs.String("tasks-etcd-ca", "", "PEM `file` of the CAs that sign the etcd members' certificates (https endpoints; default: the system's)")
	cert := fs.String("tasks-etcd-cert", "", "PEM `file` of a client certificate for etcd (with -tasks-etcd-key)")
	key := fs.String("tasks-etcd-key", "", "PEM `file` of the client certificate's key")
	user := fs.String("tasks-etcd-user", "", "etcd user `name` (etcd auth enabled); its password is read from $"+etcdPasswordEnv)
	return func() error {
		if *endpoints == "" {
			return nil
		}
		if to.Dir != "" {
			return errors.New("-tasks-etcd and -tasks-dir: give one store")
		}
		o := &etcdstore.Options{Endpoints: strings.Split(*endpoints, ","), Prefix: *prefix, HoldTTL: *hold, Timeout: *timeout,
			Username: *user, Password: os.Getenv(etcdPasswordEnv)}
		if *ca != "" || *cert != "" || *key != "" {
			tc := &tls.Config{MinVersion: tls.VersionTLS12}
			if *ca != "" {
				pem, err := os.ReadFile(*ca)
				if err != nil {
					return fmt.Errorf("-tasks-etcd-ca: %w", err)
				}
				tc.RootCAs = x509.NewCertPool()
				if !tc.RootCAs.AppendCertsFromPEM(pem) {
					return fmt.Errorf("-tasks-etcd-ca: no certificate in %s", *ca)
				}
			}
			if (*cert == "") != (*key == "") {
				return errors.New("-tasks-etcd-cert and -tasks-etcd-key go together")
			}
			if *cert != "" {
				c, err := tls.LoadX509KeyPair(*cert, *key)
				if err != nil {
					return fmt.Errorf("-tasks-etcd-cert: %w", err)
				}
				tc.Certificates = []tls.Certificate{c}
			}
			o.TLS = tc
		}
		to.Etcd = o
		return nil
	}
}
