// Command interpreter-webhook is the reference ResourceInterpreter webhook: it serves the interpreter review
// protocol over HTTPS for the example kind Database (internal/interpreterwebhook/database). See
// docs/interpreters-webhook.md.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/open-cluster-management-io/placement-manifestwork/internal/interpreterwebhook/database"
)

func main() {
	addr := flag.String("addr", ":8443", "address to listen on")
	certFile := flag.String("tls-cert", "", "PEM serving certificate (required)")
	keyFile := flag.String("tls-key", "", "PEM key of the serving certificate (required)")
	flag.Parse()
	if err := run(*addr, *certFile, *keyFile); err != nil {
		fmt.Fprintln(os.Stderr, "interpreter-webhook:", err)
		os.Exit(1)
	}
}

func run(addr, certFile, keyFile string) error {
	if certFile == "" || keyFile == "" {
		return errors.New("--tls-cert and --tls-key are required")
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return fmt.Errorf("loading the serving certificate: %w", err)
	}
	listener, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/", database.Handler())
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	server := &http.Server{
		Handler:           mux,
		TLSConfig:         &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}},
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = server.Shutdown(shutdown)
	}()
	log.Printf("Serving the interpreter review protocol for %s %s on https://%s", database.Group, database.Kind, listener.Addr())
	if err := server.ServeTLS(listener, "", ""); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
