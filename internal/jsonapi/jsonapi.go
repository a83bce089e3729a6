// Package jsonapi is the one JSON-over-HTTP call of rocelab's API
// clients (a node's API, nodeapi; an agent's, agentapi): the request body
// marshalled, the answer read within a bound, a non-2xx answer turned
// into a StatusError carrying the server's {"error": …} message.
package jsonapi

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"github.com/rocelab/rocelab/internal/readcap"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

// MaxBody bounds an answer's size.
const MaxBody = 64 << 20

// ErrorBody is the body of every error answer of rocelab's APIs.
type ErrorBody struct {
	Error string `json:"error"`
}

// StatusError is an answer with a status other than 2xx.
type StatusError struct {
	Status  int
	Message string
}

func (e *StatusError) Error() string { return fmt.Sprintf("%d: %s", e.Status, e.Message) }

// Call sends in (JSON; nil sends no body) to url with method on hc and
// decodes a 2xx answer into out (nil discards it). A ctx without a
// deadline gets timeout (0: none): a server that stopped answering fails
// the call instead of holding it. A non-2xx answer is a *StatusError;
// other errors come from the transport (*url.Error) or the codec, for the
// caller to wrap.
func Call(ctx context.Context, hc *http.Client, timeout time.Duration, method, url string, in, out any) error {
	if _, ok := ctx.Deadline(); !ok && timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxBody))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		var e ErrorBody
		if json.Unmarshal(b, &e) != nil || e.Error == "" {
			e.Error = string(bytes.TrimSpace(b))
		}
		return &StatusError{Status: resp.StatusCode, Message: e.Error}
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(b, out)
}

// Write answers v as JSON with status code (0 = 200).
func Write(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	if code != 0 {
		w.WriteHeader(code)
	}
	json.NewEncoder(w).Encode(v)
}

// WriteError answers err as an ErrorBody with status code.
func WriteError(w http.ResponseWriter, code int, err error) {
	Write(w, code, ErrorBody{Error: err.Error()})
}

// TokenEnv is the environment variable that holds the bearer token of
// rocelab's agents (rocelab agent --token-file), and TokenFileEnv one that
// names a file holding it: every client of an agent, and of a node through
// an agent, sends it.
const (
	TokenEnv     = "ROCELAB_AGENT_TOKEN"
	TokenFileEnv = "ROCELAB_AGENT_TOKEN_FILE"
)

// TokenFromEnv returns the agents' token from the environment ("" when
// none is set).
func TokenFromEnv() (string, error) {
	if t := os.Getenv(TokenEnv); t != "" {
		return t, nil
	}
	if f := os.Getenv(TokenFileEnv); f != "" {
		return ReadToken(f)
	}
	return "", nil
}

// ReadToken reads a token file: its first line, trimmed.
func ReadToken(path string) (string, error) {
	b, err := readcap.ReadFile(path, readcap.Small, "token file")
	if err != nil {
		return "", fmt.Errorf("token: %w", err)
	}
	t, _, _ := strings.Cut(string(b), "\n")
	t = strings.TrimSpace(t)
	if t == "" {
		return "", fmt.Errorf("token: %s is empty", path)
	}
	return t, nil
}

// Bearer sends Token as a bearer token on every request through Base.
type Bearer struct {
	Base  http.RoundTripper
	Token string
}

// RoundTrip implements http.RoundTripper.
func (b Bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	if b.Token == "" {
		return b.Base.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.Token)
	return b.Base.RoundTrip(r)
}

// RequireBearer wraps h so that only requests carrying token as a bearer
// token reach it; the others get 401. An empty token lets every request
// through.
func RequireBearer(token string, h http.Handler) http.Handler {
	if token == "" {
		return h
	}
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			WriteError(w, http.StatusUnauthorized, fmt.Errorf("this agent wants its token (%s or %s)", TokenEnv, TokenFileEnv))
			return
		}
		h.ServeHTTP(w, r)
	})
}
