package jsonapi_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
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
