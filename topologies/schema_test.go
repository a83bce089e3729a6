package topologies

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"testing"

	"github.com/invopop/jsonschema"
)

var update = flag.Bool("update", false, "rewrite schema.json")

func TestSchema(t *testing.T) {
	r := &jsonschema.Reflector{}
	if err := r.AddGoComments("github.com/rocelab/rocelab/topologies", "."); err != nil {
		t.Fatal(err)
	}
	got, err := GenerateSchema(r.CommentMap)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile("schema.json", got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(got, Schema()) {
		t.Fatal("schema.json is stale: run go test ./topologies -run TestSchema -update")
	}
	var m map[string]any
	if err := json.Unmarshal(got, &m); err != nil {
		t.Fatal(err)
	}
	props := m["properties"].(map[string]any)
	for _, k := range []string{"name", "nodes", "links", "profiles", "generate", "defaults", "addressing"} {
		if props[k] == nil {
			t.Errorf("schema has no property %q", k)
		}
	}
}
