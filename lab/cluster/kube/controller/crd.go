package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/rocelab/rocelab/lab/cluster/kube"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// Limits of a Lab's spec that the API server checks (the CRD's schema).
const (
	// MaxTopology is the longest topology text: a Lab is one object in
	// etcd, whose default limit is 1.5 MiB a request.
	MaxTopology = 1 << 20
	// MaxScale is the largest scale factor k: 1 s of wall clock per µs
	// of fabric time.
	MaxScale = 1_000_000
)

// CRD is the Lab resource's definition: namespaced, short name rlab, a
// status subresource, a schema with descriptions and limits (a name of at
// most kube.MaxNameLength characters), and printer columns. The file
// deploy/helm/rocelab/crds/labs.yaml is written from it (TestCRDFile).
func CRD() *apiextv1.CustomResourceDefinition {
	return &apiextv1.CustomResourceDefinition{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"},
		ObjectMeta: metav1.ObjectMeta{Name: "labs." + kube.Group, Labels: map[string]string{"app.kubernetes.io/name": "rocelab"}},
		Spec: apiextv1.CustomResourceDefinitionSpec{
			Group: kube.Group,
			Names: apiextv1.CustomResourceDefinitionNames{Plural: "labs", Singular: "lab", Kind: "Lab", ListKind: "LabList",
				ShortNames: []string{"rlab"}, Categories: []string{"rocelab"}},
			Scope: apiextv1.NamespaceScoped,
			Versions: []apiextv1.CustomResourceDefinitionVersion{{
				Name: kube.Version, Served: true, Storage: true,
				Subresources: &apiextv1.CustomResourceSubresources{Status: &apiextv1.CustomResourceSubresourceStatus{}},
				AdditionalPrinterColumns: []apiextv1.CustomResourceColumnDefinition{
					{Name: "Phase", Type: "string", JSONPath: ".status.phase", Description: "Deploying, Running, Degraded or Failed"},
					{Name: "Ready", Type: "string", JSONPath: `.status.conditions[?(@.type=="Ready")].status`, Description: "whether every node runs"},
					{Name: "Machines", Type: "integer", JSONPath: ".status.machines", Description: "machines the lab spans"},
					{Name: "Nodes", Type: "integer", JSONPath: ".status.nodes", Description: "nodes of the lab"},
					{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"},
					{Name: "Message", Type: "string", JSONPath: ".status.message", Priority: 1, Description: "what the phase is about"},
				},
				Schema: &apiextv1.CustomResourceValidation{OpenAPIV3Schema: labSchema()},
			}},
		},
	}
}

// labSchema is the Lab's OpenAPI schema. Its descriptions are the Go
// types' doc comments (TestSchemaDescribesTypes keeps every field here).
func labSchema() *apiextv1.JSONSchemaProps {
	return &apiextv1.JSONSchemaProps{
		Type:        "object",
		Description: "A Lab is a rocelab lab that spans the cluster's machines: rocelab-controller deploys its topology across the rocelab agents that announce themselves in its namespace (Leases rocelab-agent-MACHINE), repairs it, and destroys every part of it when the Lab is deleted.",
		Required:    []string{"spec"},
		Properties: map[string]apiextv1.JSONSchemaProps{
			"apiVersion": {Type: "string", Description: "APIVersion defines the versioned schema of this representation of an object."},
			"kind":       {Type: "string", Description: "Kind is a string value representing the REST resource this object represents."},
			"metadata": {Type: "object", Properties: map[string]apiextv1.JSONSchemaProps{
				"name": {Type: "string", MaxLength: ptr(int64(kube.MaxNameLength)),
					Description: fmt.Sprintf("The Lab's name is the lab's: at most %d characters, as it is part of the names of the lab's network namespaces and files.", kube.MaxNameLength)},
			}},
			"spec":   specSchema(),
			"status": statusSchema(),
		},
	}
}

func specSchema() apiextv1.JSONSchemaProps {
	return apiextv1.JSONSchemaProps{
		Type:        "object",
		Description: "What to deploy: a topology file's text, the scale factor and the seed. A change of the spec takes the lab down and deploys it anew.",
		Required:    []string{"topology"},
		Properties: map[string]apiextv1.JSONSchemaProps{
			"topology": {Type: "string", MinLength: ptr(int64(1)), MaxLength: ptr(int64(MaxTopology)),
				Description: "The topology file's text (YAML, as rocelab deploy -t reads it: nodes, links, profiles). See docs/topology.md."},
			"source": {Type: "string", MaxLength: ptr(int64(4096)),
				Description: "The topology file's name, which error messages about the topology cite."},
			"scale": {Type: "integer", Minimum: ptr(0.0), Maximum: ptr(float64(MaxScale)),
				Description: fmt.Sprintf("The scale factor k: 1 ms of wall clock is 1/k ms of fabric time. 0 (the default) lets the controller choose from the machines' capacity; at most %d.", MaxScale)},
			"seed": {Type: "integer", Format: "int64", Minimum: ptr(0.0),
				Description: "The lab's seed (ECMP hashes, fault models); 0 (the default) picks one."},
		},
	}
}

func statusSchema() apiextv1.JSONSchemaProps {
	preserve := true
	return apiextv1.JSONSchemaProps{
		Type:        "object",
		Description: "How the lab is doing, written by rocelab-controller.",
		Properties: map[string]apiextv1.JSONSchemaProps{
			"phase": {Type: "string", Enum: enum("", kube.PhaseDeploying, kube.PhaseRunning, kube.PhaseDegraded, kube.PhaseFailed),
				Description: "Deploying, Running, Degraded (a node or an agent does not answer; the controller repairs it) or Failed (the deploy failed and was rolled back, or the Lab cannot be deployed: see message)."},
			"message":            {Type: "string", Description: "What the phase is about, in a line."},
			"observedGeneration": {Type: "integer", Format: "int64", Minimum: ptr(0.0), Description: "The spec's generation that the phase and conditions are about."},
			"conditions": {Type: "array", XListType: ptr("map"), XListMapKeys: []string{"type"},
				Description: "Ready (every node runs) and Degraded (a deployed lab has nodes down or an agent that does not answer), with reasons.",
				Items:       &apiextv1.JSONSchemaPropsOrArray{Schema: ptr(conditionSchema())}},
			"machines": {Type: "integer", Minimum: ptr(0.0), Description: "How many machines the deployed lab spans."},
			"nodes":    {Type: "integer", Minimum: ptr(0.0), Description: "How many nodes the deployed lab has."},
			"deployed": {Type: "string", Format: "date-time", Description: "When every part of the lab was up."},
			"lab": {Type: "object", XPreserveUnknownFields: &preserve,
				Description: "The deployed lab's record (machines, placement, nodes, and the agent URLs that serve them), which rocelab copies to a machine so that its commands reach the lab."},
		},
	}
}

// conditionSchema is metav1.Condition's, as controller-gen writes it.
func conditionSchema() apiextv1.JSONSchemaProps {
	return apiextv1.JSONSchemaProps{
		Type:        "object",
		Description: "One aspect of the lab's state (metav1.Condition).",
		Required:    []string{"lastTransitionTime", "message", "reason", "status", "type"},
		Properties: map[string]apiextv1.JSONSchemaProps{
			"type":               {Type: "string", MaxLength: ptr(int64(316)), Pattern: `^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$`, Description: "Ready or Degraded."},
			"status":             {Type: "string", Enum: enum("True", "False", "Unknown"), Description: "True, False or Unknown."},
			"observedGeneration": {Type: "integer", Format: "int64", Minimum: ptr(0.0), Description: "The spec's generation the condition was set for."},
			"lastTransitionTime": {Type: "string", Format: "date-time", Description: "When the condition last changed status."},
			"reason":             {Type: "string", MinLength: ptr(int64(1)), MaxLength: ptr(int64(1024)), Pattern: `^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`, Description: "Why, in CamelCase (Deployed, DeployFailed, InvalidName, NodesDown, AgentLost, …)."},
			"message":            {Type: "string", MaxLength: ptr(int64(32768)), Description: "Why, for people."},
		},
	}
}

// CRDFile is CRD as the YAML file that ships it
// (deploy/helm/rocelab/crds/labs.yaml, rocelab-controller --print-crd):
// what kubectl apply and Helm read, without the fields the API server
// fills in.
func CRDFile() ([]byte, error) {
	b, err := json.Marshal(CRD())
	if err != nil {
		return nil, fmt.Errorf("CRD: %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("CRD: %w", err)
	}
	delete(m, "status")
	delete(m["metadata"].(map[string]any), "creationTimestamp")
	y, err := yaml.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("CRD: %w", err)
	}
	head := "# The Lab resource of rocelab (labs.rocelab.dev). Generated from\n" +
		"# lab/cluster/kube/controller/crd.go: go test ./lab/cluster/kube/controller -run TestCRDFile -update\n"
	return append([]byte(head), y...), nil
}

func enum(vs ...string) []apiextv1.JSON {
	out := make([]apiextv1.JSON, len(vs))
	for i, v := range vs {
		out[i] = apiextv1.JSON{Raw: fmt.Appendf(nil, "%q", v)}
	}
	return out
}

func ptr[T any](v T) *T { return &v }

// InstallCRD creates or updates the Lab CRD and waits until the API
// server serves it.
func InstallCRD(ctx context.Context, c client.Client) error {
	want := CRD()
	var have apiextv1.CustomResourceDefinition
	// Replicas start at once: a create or an update may meet another's.
	err := retry.OnError(retry.DefaultRetry, func(err error) bool {
		return apierrors.IsAlreadyExists(err) || apierrors.IsConflict(err)
	}, func() error {
		err := c.Get(ctx, types.NamespacedName{Name: want.Name}, &have)
		switch {
		case apierrors.IsNotFound(err):
			return c.Create(ctx, want.DeepCopy())
		case err != nil:
			return err
		}
		have.Spec = want.Spec
		if have.Labels == nil {
			have.Labels = map[string]string{}
		}
		for k, v := range want.Labels {
			have.Labels[k] = v
		}
		return c.Update(ctx, &have)
	})
	if err != nil {
		return fmt.Errorf("install CRD %s: %w", want.Name, err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if err := c.Get(ctx, types.NamespacedName{Name: want.Name}, &have); err == nil {
			for _, cond := range have.Status.Conditions {
				if cond.Type == apiextv1.Established && cond.Status == apiextv1.ConditionTrue {
					return nil
				}
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("CRD %s not established after 30 s", want.Name)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
