package topologies

import (
	_ "embed"
	"encoding/json"
	"fmt"

	"github.com/invopop/jsonschema"
)

//go:embed schema.json
var schemaJSON []byte

// Schema returns the JSON Schema of the topology format (schema.json),
// for editors: e.g. "# yaml-language-server: $schema=…/schema.json".
func Schema() []byte { return schemaJSON }

// SchemaID is the $id of the schema.
const SchemaID = "https://github.com/rocelab/rocelab/topologies/schema.json"

// GenerateSchema builds the JSON Schema from the spec types. comments maps
// Go types and fields to their doc comments (jsonschema's CommentMap, filled
// by Reflector.AddGoComments from this package's source); schema.json is
// generated with them by "go test -run TestSchema -update".
func GenerateSchema(comments map[string]string) ([]byte, error) {
	r := &jsonschema.Reflector{
		FieldNameTag:   "yaml",
		CommentMap:     comments,
		ExpandedStruct: true,
	}
	s := r.Reflect(&File{})
	s.ID = SchemaID
	s.Title = "rocelab topology"
	out, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("marshal schema: %w", err)
	}
	return append(out, '\n'), nil
}

// oneOfScalar turns an object schema into "this scalar or that object".
func oneOfScalar(s *jsonschema.Schema, scalar *jsonschema.Schema) {
	obj := *s
	obj.Description = ""
	*s = jsonschema.Schema{Description: s.Description, OneOf: []*jsonschema.Schema{scalar, &obj}}
}

var offSchema = &jsonschema.Schema{Type: "string", Enum: []any{"off"}}

// JSONSchemaExtend allows the string form of a link.
func (LinkSpec) JSONSchemaExtend(s *jsonschema.Schema) {
	oneOfScalar(s, &jsonschema.Schema{Type: "string", Pattern: `^\s*[A-Za-z][A-Za-z0-9_-]*(:[A-Za-z0-9_/.-]+)?\s*--\s*[A-Za-z][A-Za-z0-9_-]*(:[A-Za-z0-9_/.-]+)?\s*$`,
		Description: `"node:port -- node:port"; a switch or storage end may omit :port`})
}

// JSONSchemaExtend allows ecn: {N: off}.
func (ECNSpec) JSONSchemaExtend(s *jsonschema.Schema) { oneOfScalar(s, offSchema) }

// JSONSchemaExtend allows pfc: off.
func (PFCSpec) JSONSchemaExtend(s *jsonschema.Schema) { oneOfScalar(s, offSchema) }

// JSONSchemaExtend allows watchdog: off.
func (WatchdogSpec) JSONSchemaExtend(s *jsonschema.Schema) { oneOfScalar(s, offSchema) }

// JSONSchemaExtend allows trim: off.
func (TrimSpec) JSONSchemaExtend(s *jsonschema.Schema) { oneOfScalar(s, offSchema) }

// JSONSchemaExtend allows fe: off.
func (FESpec) JSONSchemaExtend(s *jsonschema.Schema) { oneOfScalar(s, offSchema) }
