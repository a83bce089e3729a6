package labca_test

import (
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocelab/rocelab/internal/labca"
)

// TestServeAndTrust: a CA made in an empty directory (key 0600), loaded
// again the same; a server certificate it issues for an IP address is
// trusted by a client that trusts the CA, and refused by one that trusts
// another CA.
func TestServeAndTrust(t *testing.T) {
	dir := t.TempDir()
	ca, made, err := labca.LoadOrCreate(dir)
	if err != nil || !made {
		t.Fatalf("make: %v (made %v)", err, made)
	}
	if st, err := os.Stat(filepath.Join(dir, labca.KeyFile)); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("CA key file: %v %v, want 0600", st.Mode(), err)
	}
	again, made, err := labca.LoadOrCreate(dir)
	if err != nil || made || !again.Cert.Equal(ca.Cert) {
		t.Fatalf("load again: %v (made %v)", err, made)
	}
	srvCfg, err := ca.ServerConfig("127.0.0.1", "m1")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", srvCfg)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello") }))
	get := func(caFile string) (string, error) {
		cfg, err := labca.ClientConfig(caFile)
		if err != nil {
			return "", err
		}
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}}
		resp, err := c.Get("https://" + ln.Addr().String() + "/")
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b), nil
	}
	if body, err := get(filepath.Join(dir, labca.CertFile)); err != nil || body != "hello" {
		t.Errorf("client trusting the lab CA: %q, %v", body, err)
	}
	other := t.TempDir()
	if _, _, err := labca.LoadOrCreate(other); err != nil {
		t.Fatal(err)
	}
	if _, err := get(filepath.Join(other, labca.CertFile)); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("client trusting another CA: %v, want a certificate error", err)
	}
	if _, err := net.Dial("tcp", ln.Addr().String()); err != nil {
		t.Fatal(err)
	}
}
