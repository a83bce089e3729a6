// Package labca is the certificate authority of the labs that span
// machines: a CA the agents of one lab share (like their token), from
// which each agent issues itself a server certificate for the address it
// listens on, and which the commands that reach the agents trust
// ($ROCELAB_AGENT_CA). The token then no longer crosses the underlay in
// clear text.
package labca

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// Files of a CA directory.
const (
	CertFile = "ca.pem"
	KeyFile  = "ca-key.pem"
)

// EnvCA names the CA certificate file clients trust (a CA directory's
// CertFile): with it set, they reach the agents over https.
const EnvCA = "ROCELAB_AGENT_CA"

// CA is a loaded certificate authority.
type CA struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
	PEM  []byte
}

// LoadOrCreate loads the CA in dir, or makes one there when dir holds
// none (made reports which). The key file is 0600.
func LoadOrCreate(dir string) (ca *CA, made bool, err error) {
	ca, err = Load(dir)
	if err == nil {
		return ca, false, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, false, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, false, fmt.Errorf("lab CA: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, false, fmt.Errorf("lab CA: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "rocelab lab CA", Organization: []string{"rocelab"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().AddDate(10, 0, 0),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, false, fmt.Errorf("lab CA: %w", err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, false, fmt.Errorf("lab CA: %w", err)
	}
	// The key first, exclusively: two agents starting at once make one CA.
	kf, err := os.OpenFile(filepath.Join(dir, KeyFile), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			time.Sleep(100 * time.Millisecond)
			ca, err = Load(dir)
			return ca, false, err
		}
		return nil, false, fmt.Errorf("lab CA: %w", err)
	}
	if err := pem.Encode(kf, &pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}); err != nil {
		kf.Close()
		return nil, false, fmt.Errorf("lab CA: %w", err)
	}
	if err := kf.Close(); err != nil {
		return nil, false, fmt.Errorf("lab CA: %w", err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if err := os.WriteFile(filepath.Join(dir, CertFile), certPEM, 0o644); err != nil {
		return nil, false, fmt.Errorf("lab CA: %w", err)
	}
	ca, err = Load(dir)
	return ca, err == nil, err
}

// Load loads the CA in dir.
func Load(dir string) (*CA, error) {
	certPEM, err := os.ReadFile(filepath.Join(dir, CertFile))
	if err != nil {
		return nil, err
	}
	keyPEM, err := os.ReadFile(filepath.Join(dir, KeyFile))
	if err != nil {
		return nil, err
	}
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, fmt.Errorf("lab CA in %s: %s or %s is not PEM", dir, CertFile, KeyFile)
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, fmt.Errorf("lab CA in %s: %w", dir, err)
	}
	key, err := x509.ParseECPrivateKey(kb.Bytes)
	if err != nil {
		return nil, fmt.Errorf("lab CA in %s: %w", dir, err)
	}
	if !cert.IsCA {
		return nil, fmt.Errorf("lab CA in %s: %s is not a CA certificate", dir, CertFile)
	}
	return &CA{Cert: cert, Key: key, PEM: certPEM}, nil
}

// ServerConfig issues a server certificate for host (an IP address or a
// name) and names, valid for a year, and returns a TLS configuration that
// serves it.
func (ca *CA) ServerConfig(host string, names ...string) (*tls.Config, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: host, Organization: []string{"rocelab agent"}},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().AddDate(1, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range append([]string{host}, names...) {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else if h != "" {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		return nil, fmt.Errorf("issue a certificate for %s: %w", host, err)
	}
	return &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{der, ca.Cert.Raw}, PrivateKey: key}},
		MinVersion:   tls.VersionTLS13,
	}, nil
}

// ClientConfig returns the TLS configuration of a client that trusts the
// CA certificate in file (PEM).
func ClientConfig(file string) (*tls.Config, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("agent CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("agent CA: %s holds no PEM certificate", file)
	}
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS13}, nil
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	return n
}

// FromEnv is the TLS configuration of a client of the agents: trusting
// the CA certificate $ROCELAB_AGENT_CA names (nil, nil when it is unset).
func FromEnv() (*tls.Config, error) {
	f := os.Getenv(EnvCA)
	if f == "" {
		return nil, nil
	}
	return ClientConfig(f)
}
