// Package kube runs labs that span machines on Kubernetes: a Lab custom
// resource (group rocelab.dev) holds a lab's topology; the controller
// (kube/controller, its own binary rocelab-controller) deploys it across
// the rocelab agents of the cluster's machines (package agent) and
// destroys it when the resource is deleted (a finalizer); the agents
// announce themselves with Leases. Kubernetes places and restarts the
// agents (a DaemonSet); rocelab wires and models (docs/multi-machine.md).
//
// This package is what the rocelab command links: the Lab type, a client
// of Labs and Leases over client-go's dynamic client, and the agent's
// announcement. controller-runtime, the typed clientsets and their scheme
// registrations stay in the controller's binary (they doubled rocelab's
// size and added 30 ms to every start of it).
package kube

import (
	"encoding/json"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Group and Version of the Lab resource.
const (
	Group   = "rocelab.dev"
	Version = "v1alpha1"
	// Finalizer keeps a deleted Lab until its parts are destroyed.
	Finalizer = "rocelab.dev/parts"
)

// GroupVersion is the Lab resource's group and version.
var GroupVersion = schema.GroupVersion{Group: Group, Version: Version}

// Phases of a Lab.
const (
	PhasePending   = ""          // not deployed yet
	PhaseDeploying = "Deploying" // the controller asked the agents
	PhaseRunning   = "Running"   // every part is up
	PhaseDegraded  = "Degraded"  // a node does not answer; the controller repairs it
	PhaseFailed    = "Failed"    // the deploy failed and was rolled back (Message says why)
)

// Lab is a lab that spans the cluster's machines.
type Lab struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              LabSpec   `json:"spec"`
	Status            LabStatus `json:"status,omitempty"`
}

// LabSpec is what to deploy. The doc comments of its fields are the
// descriptions the CRD serves (kubectl explain lab.spec): the controller's
// CRD schema (kube/controller) carries them, and its test keeps the two
// alike.
type LabSpec struct {
	// Topology is the topology file's text (YAML, as rocelab deploy -t
	// reads it).
	Topology string `json:"topology"`
	// Source names the topology file (error messages cite it).
	Source string `json:"source,omitempty"`
	// Scale is the scale factor k (wall clock per fabric time); 0 lets
	// the controller choose from the machines' capacity.
	Scale int `json:"scale,omitempty"`
	// Seed is the lab's seed (ECMP hashes, fault models); 0 picks one.
	Seed uint64 `json:"seed,omitempty"`
}

// LabStatus is how the lab is doing.
type LabStatus struct {
	// Phase is Deploying, Running, Degraded or Failed ("" before the
	// controller has looked at the Lab).
	Phase string `json:"phase,omitempty"`
	// Message says what the phase is about, in a line.
	Message string `json:"message,omitempty"`
	// ObservedGeneration is the spec generation the phase is about.
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions are Ready and Degraded (metav1.Condition conventions).
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// Machines and Nodes count the deployed lab's machines and nodes.
	Machines int `json:"machines,omitempty"`
	Nodes    int `json:"nodes,omitempty"`
	// Deployed is when the parts were all up.
	Deployed *metav1.Time `json:"deployed,omitempty"`
	// Lab is the deployed lab's record (deploy.Lab, JSON): machines,
	// placement, nodes and the URLs their agents serve them at.
	Lab json.RawMessage `json:"lab,omitempty"`
}

// Condition types of a Lab, and their reasons (CamelCase, as
// metav1.Condition wants them).
const (
	// Ready is True when every node of the lab runs.
	ConditionReady = "Ready"
	// Degraded is True when a deployed lab has nodes down or an agent
	// that does not answer.
	ConditionDegraded = "Degraded"

	ReasonPending      = "Pending"      // not looked at yet
	ReasonNoAgents     = "NoAgents"     // no agent announced itself in the namespace
	ReasonDeploying    = "Deploying"    // the agents are deploying their parts
	ReasonDeployed     = "Deployed"     // every part is up
	ReasonDeployFailed = "DeployFailed" // the deploy failed and was rolled back
	ReasonInvalidName  = "InvalidName"  // the Lab's name cannot be a lab's
	ReasonInvalidSpec  = "InvalidSpec"  // the topology does not parse or validate
	ReasonNodesDown    = "NodesDown"    // nodes do not answer; the agents restart them
	ReasonAgentLost    = "AgentLost"    // a machine's agent does not answer
	ReasonRepaired     = "Repaired"     // dead nodes were restarted
	ReasonHealthy      = "Healthy"      // nothing is down
	ReasonDeleting     = "Deleting"     // the parts are being destroyed
)

// MaxNameLength is the longest Lab name: a lab's name is part of its
// namespaces' and files' names (state.ValidName).
const MaxNameLength = 48

// LabList is a list of Labs.
type LabList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Lab `json:"items"`
}

// DeepCopyInto copies l into out.
func (l *Lab) DeepCopyInto(out *Lab) {
	*out = *l
	out.TypeMeta = l.TypeMeta
	l.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Spec = l.Spec
	out.Status = l.Status
	if l.Status.Deployed != nil {
		t := *l.Status.Deployed
		out.Status.Deployed = &t
	}
	if l.Status.Conditions != nil {
		out.Status.Conditions = make([]metav1.Condition, len(l.Status.Conditions))
		for i := range l.Status.Conditions {
			l.Status.Conditions[i].DeepCopyInto(&out.Status.Conditions[i])
		}
	}
	if l.Status.Lab != nil {
		out.Status.Lab = append(json.RawMessage(nil), l.Status.Lab...)
	}
}

// DeepCopy returns a copy of l.
func (l *Lab) DeepCopy() *Lab {
	if l == nil {
		return nil
	}
	out := new(Lab)
	l.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (l *Lab) DeepCopyObject() runtime.Object { return l.DeepCopy() }

// DeepCopyObject implements runtime.Object.
func (l *LabList) DeepCopyObject() runtime.Object {
	if l == nil {
		return nil
	}
	out := &LabList{TypeMeta: l.TypeMeta}
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	out.Items = make([]Lab, len(l.Items))
	for i := range l.Items {
		l.Items[i].DeepCopyInto(&out.Items[i])
	}
	return out
}

// AddToScheme registers Lab and LabList with s.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Lab{}, &LabList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}

// Now is the time for a status, in UTC.
func Now() *metav1.Time { t := metav1.NewTime(time.Now().UTC()); return &t }
