package controller

import (
	"context"
	"fmt"
	"time"

	"github.com/rocelab/rocelab/lab/cluster/kube"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CRD is the Lab resource's definition: namespaced, short name rlab,
// a status subresource, printer columns for phase and age.
func CRD() *apiextv1.CustomResourceDefinition {
	preserve := true
	str := apiextv1.JSONSchemaProps{Type: "string"}
	integer := apiextv1.JSONSchemaProps{Type: "integer", Minimum: ptr(0.0)}
	return &apiextv1.CustomResourceDefinition{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"},
		ObjectMeta: metav1.ObjectMeta{Name: "labs." + kube.Group},
		Spec: apiextv1.CustomResourceDefinitionSpec{
			Group: kube.Group,
			Names: apiextv1.CustomResourceDefinitionNames{Plural: "labs", Singular: "lab", Kind: "Lab", ListKind: "LabList", ShortNames: []string{"rlab"}},
			Scope: apiextv1.NamespaceScoped,
			Versions: []apiextv1.CustomResourceDefinitionVersion{{
				Name: kube.Version, Served: true, Storage: true,
				Subresources: &apiextv1.CustomResourceSubresources{Status: &apiextv1.CustomResourceSubresourceStatus{}},
				AdditionalPrinterColumns: []apiextv1.CustomResourceColumnDefinition{
					{Name: "Phase", Type: "string", JSONPath: ".status.phase"},
					{Name: "Message", Type: "string", JSONPath: ".status.message", Priority: 1},
					{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"},
				},
				Schema: &apiextv1.CustomResourceValidation{OpenAPIV3Schema: &apiextv1.JSONSchemaProps{
					Type:     "object",
					Required: []string{"spec"},
					Properties: map[string]apiextv1.JSONSchemaProps{
						"spec": {Type: "object", Required: []string{"topology"}, Properties: map[string]apiextv1.JSONSchemaProps{
							"topology": {Type: "string", MinLength: ptr(int64(1))},
							"source":   str,
							"scale":    integer,
							"seed":     integer,
						}},
						"status": {Type: "object", XPreserveUnknownFields: &preserve},
					},
				}},
			}},
		},
	}
}

func ptr[T any](v T) *T { return &v }

// InstallCRD creates or updates the Lab CRD and waits until the API
// server serves it.
func InstallCRD(ctx context.Context, c client.Client) error {
	want := CRD()
	var have apiextv1.CustomResourceDefinition
	err := c.Get(ctx, types.NamespacedName{Name: want.Name}, &have)
	switch {
	case apierrors.IsNotFound(err):
		if err := c.Create(ctx, want); err != nil {
			return fmt.Errorf("create CRD %s: %w", want.Name, err)
		}
	case err != nil:
		return fmt.Errorf("get CRD %s: %w", want.Name, err)
	default:
		have.Spec = want.Spec
		if err := c.Update(ctx, &have); err != nil {
			return fmt.Errorf("update CRD %s: %w", want.Name, err)
		}
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
