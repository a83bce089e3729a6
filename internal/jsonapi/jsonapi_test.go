package jsonapi_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/rocelab/rocelab/internal/jsonapi"
)

func TestCall(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/echo":
			var in map[string]int
			if r.Header.Get("Content-Type") != "application/json" {
				jsonapi.WriteError(w, http.StatusBadRequest, errors.New("no JSON"))
				return
			}
			if err := jsonDecode(r, &in); err != nil {
				jsonapi.WriteError(w, http.StatusBadRequest, err)
				return
			}
			in["n"]++
			jsonapi.Write(w, http.StatusCreated, in)
		case "/plain":
			w.WriteHeader(http.StatusBadGateway)
			w.Write([]byte(" upstream gone \n"))
		default:
			jsonapi.WriteError(w, http.StatusNotFound, errors.New("no such thing"))
		}
	}))
	defer srv.Close()
	hc := srv.Client()
	var out map[string]int
	if err := jsonapi.Call(t.Context(), hc, time.Second, http.MethodPost, srv.URL+"/echo", map[string]int{"n": 1}, &out); err != nil || out["n"] != 2 {
		t.Errorf("echo = %v, %v", out, err)
	}
	for _, c := range []struct {
		path   string
		status int
		msg    string
	}{{"/nothing", 404, "no such thing"}, {"/plain", 502, "upstream gone"}, {"/echo", 400, "no JSON"}} {
		err := jsonapi.Call(t.Context(), hc, time.Second, http.MethodGet, srv.URL+c.path, nil, nil)
		var se *jsonapi.StatusError
		if !errors.As(err, &se) || se.Status != c.status || se.Message != c.msg {
			t.Errorf("%s: %v, want %d %q", c.path, err, c.status, c.msg)
		}
	}
}

func jsonDecode(r *http.Request, v any) error { return json.NewDecoder(r.Body).Decode(v) }

func TestBearer(t *testing.T) {
	h := jsonapi.RequireBearer("s3cret", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		jsonapi.Write(w, 0, map[string]string{"ok": "yes"})
	}))
	srv := httptest.NewServer(h)
	defer srv.Close()
	for _, c := range []struct {
		token string
		want  int
	}{{"s3cret", 0}, {"", http.StatusUnauthorized}, {"s3cre", http.StatusUnauthorized}} {
		hc := &http.Client{Transport: jsonapi.Bearer{Base: http.DefaultTransport, Token: c.token}}
		err := jsonapi.Call(t.Context(), hc, time.Second, http.MethodGet, srv.URL, nil, nil)
		var se *jsonapi.StatusError
		switch {
		case c.want == 0 && err != nil:
			t.Errorf("token %q: %v", c.token, err)
		case c.want != 0 && (!errors.As(err, &se) || se.Status != c.want):
			t.Errorf("token %q: %v, want %d", c.token, err, c.want)
		}
	}
	t.Setenv(jsonapi.TokenEnv, "")
	f := t.TempDir() + "/token"
	os.WriteFile(f, []byte("  abc  \nrest\n"), 0o600)
	t.Setenv(jsonapi.TokenFileEnv, f)
	if tok, err := jsonapi.TokenFromEnv(); tok != "abc" || err != nil {
		t.Errorf("TokenFromEnv = %q, %v", tok, err)
	}
	t.Setenv(jsonapi.TokenEnv, "xyz")
	if tok, _ := jsonapi.TokenFromEnv(); tok != "xyz" {
		t.Errorf("TokenFromEnv with %s = %q", jsonapi.TokenEnv, tok)
	}
}
