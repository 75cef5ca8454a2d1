// Package webhooktest makes what tests of interpreter webhooks need: a certificate authority and a serving
// certificate signed by it, and a TLS server for a handler.
package webhooktest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"time"
)

// T is what the helpers need of a test: testing.TB, or Ginkgo's GinkgoT().
type T interface {
	Helper()
	Fatal(args ...any)
	Cleanup(func())
}

// Certificate is a serving certificate and the authority that signed it, in PEM.
type Certificate struct {
	// CA is the authority's certificate: a webhook's caBundle.
	CA   []byte
	Cert []byte
	Key  []byte
}

// NewCertificate makes an authority and a serving certificate for the hosts (DNS names or IP addresses),
// valid for an hour.
func NewCertificate(t T, hosts ...string) Certificate {
	t.Helper()
	now := time.Now()
	return NewCertificateValid(t, now.Add(-time.Minute), now.Add(time.Hour), hosts...)
}

// NewCertificateValid is NewCertificate for a serving certificate valid from notBefore to notAfter (its
// authority is valid for an hour from now): an expired one, or one not yet valid.
func NewCertificateValid(t T, notBefore, notAfter time.Time, hosts ...string) Certificate {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTemplate := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "interpreter-webhook-test-ca"},
		NotBefore:             now.Add(-time.Minute),
		NotAfter:              now.Add(time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTemplate, caTemplate, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serving := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "interpreter-webhook"},
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			serving.IPAddresses = append(serving.IPAddresses, ip)
		} else {
			serving.DNSNames = append(serving.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, serving, caCert, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return Certificate{
		CA:   pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		Cert: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		Key:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	}
}

// NewTLSServer serves the handler over TLS with the certificate; the test closes it.
func NewTLSServer(t T, cert Certificate, handler http.Handler) *httptest.Server {
	t.Helper()
	pair, err := tls.X509KeyPair(cert.Cert, cert.Key)
	if err != nil {
		t.Fatal(err)
	}
	server := httptest.NewUnstartedServer(handler)
	server.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	server.StartTLS()
	t.Cleanup(server.Close)
	return server
}
