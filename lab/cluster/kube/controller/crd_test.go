package controller

import (
	"bytes"
	"flag"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/rocelab/rocelab/lab/cluster/kube"
	"github.com/rocelab/rocelab/lab/emulation/base/state"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

var update = flag.Bool("update", false, "rewrite deploy/helm/rocelab/crds/labs.yaml")

// crdFile is where the chart ships the CRD (Helm installs its crds/
// folder before the chart's templates).
const crdFile = "../../../../deploy/helm/rocelab/crds/labs.yaml"

// TestCRDFile fails when the shipped CRD file is not CRD()'s: run
// go test ./lab/cluster/kube/controller -run TestCRDFile -update.
func TestCRDFile(t *testing.T) {
	got, err := CRDFile()
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(crdFile, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	have, err := os.ReadFile(crdFile)
	if err != nil || !bytes.Equal(have, got) {
		t.Fatalf("%s is stale (%v): run go test ./lab/cluster/kube/controller -run TestCRDFile -update", crdFile, err)
	}
}

// TestSchemaDescribesTypes checks that every JSON field of the Lab's
// spec and status has a described property in the CRD's schema, and no
// property lacks a field: the schema and the Go types cannot drift.
func TestSchemaDescribesTypes(t *testing.T) {
	root := CRD().Spec.Versions[0].Schema.OpenAPIV3Schema
	for _, c := range []struct {
		name string
		typ  reflect.Type
	}{{"spec", reflect.TypeFor[kube.LabSpec]()}, {"status", reflect.TypeFor[kube.LabStatus]()}} {
		s := root.Properties[c.name]
		if s.Description == "" {
			t.Errorf("%s has no description", c.name)
		}
		fields := map[string]bool{}
		for f := range c.typ.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			fields[name] = true
			p, ok := s.Properties[name]
			switch {
			case !ok:
				t.Errorf("%s.%s (%s) is not in the schema", c.name, name, f.Name)
			case p.Description == "":
				t.Errorf("%s.%s has no description", c.name, name)
			}
		}
		for name := range s.Properties {
			if !fields[name] {
				t.Errorf("the schema's %s.%s is no field of %v", c.name, name, c.typ)
			}
		}
	}
	var walk func(path string, s apiextv1.JSONSchemaProps)
	walk = func(path string, s apiextv1.JSONSchemaProps) {
		if s.Description == "" && path != "metadata" {
			t.Errorf("%s has no description", path)
		}
		for k, p := range s.Properties {
			walk(path+"."+k, p)
		}
		if s.Items != nil && s.Items.Schema != nil {
			walk(path+"[]", *s.Items.Schema)
		}
	}
	for k, p := range root.Properties {
		walk(k, p)
	}
}

// TestNameLimit checks that the CRD's name limit is the lab's.
func TestNameLimit(t *testing.T) {
	name := strings.Repeat("a", kube.MaxNameLength)
	if err := state.ValidName(name); err != nil {
		t.Errorf("a name of %d characters: %v", len(name), err)
	}
	if err := state.ValidName(name + "a"); err == nil {
		t.Errorf("a name of %d characters is valid: the CRD's limit is %d", len(name)+1, kube.MaxNameLength)
	}
	meta := CRD().Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["metadata"]
	if got := meta.Properties["name"].MaxLength; got == nil || *got != kube.MaxNameLength {
		t.Errorf("metadata.name's maxLength is %v, want %d", got, kube.MaxNameLength)
	}
}
