package controller

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/rocelab/rocelab/lab/cluster/kube"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Events of a Lab (reason, action), beside the conditions' reasons.
const (
	EventRedeploying   = "Redeploying"   // the spec changed: down, then up again
	EventDestroying    = "Destroying"    // the Lab was deleted: its parts go
	EventDestroyed     = "Destroyed"     // every agent removed its part
	EventDestroyFailed = "DestroyFailed" // an agent did not; retried
)

// setCondition sets condition typ of st for generation gen.
func setCondition(st *kube.LabStatus, gen int64, typ string, status metav1.ConditionStatus, reason, msg string) {
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: typ, Status: status, Reason: reason,
		Message: clip(msg, 32768), ObservedGeneration: gen})
}

// ready sets st's phase and message, and its Ready and Degraded
// conditions: ready says whether Ready is True; degraded, when not "",
// is Degraded's reason (True), else Degraded is False.
func ready(st *kube.LabStatus, gen int64, phase, msg string, isReady bool, reason, degraded string) {
	st.Phase, st.Message, st.ObservedGeneration = phase, msg, gen
	status := metav1.ConditionFalse
	if isReady {
		status = metav1.ConditionTrue
	}
	setCondition(st, gen, kube.ConditionReady, status, reason, msg)
	if degraded != "" {
		setCondition(st, gen, kube.ConditionDegraded, metav1.ConditionTrue, degraded, msg)
	} else {
		why, how := kube.ReasonHealthy, "every node answers"
		if !isReady {
			why, how = reason, "nothing deployed to degrade" // say why not
		}
		setCondition(st, gen, kube.ConditionDegraded, metav1.ConditionFalse, why, how)
	}
}

// writeStatus applies set to the Lab's status and writes it, reading
// the Lab again and reapplying on a conflict with a write in between
// (the status is the controller's alone). lab is left as written.
func (r *Reconciler) writeStatus(ctx context.Context, lab *kube.Lab, set func(*kube.LabStatus)) error {
	first := true
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if !first {
			if err := r.Client.Get(ctx, client.ObjectKeyFromObject(lab), lab); err != nil {
				return err
			}
		}
		first = false
		set(&lab.Status)
		return r.Client.Status().Update(ctx, lab)
	})
	if err != nil {
		return fmt.Errorf("status of Lab %s/%s: %w", lab.Namespace, lab.Name, err)
	}
	return nil
}

// event tells an Event on lab; warn makes it a Warning.
func (r *Reconciler) event(lab *kube.Lab, warn bool, reason, action, msg string, args ...any) {
	if r.Events == nil {
		return
	}
	typ := corev1.EventTypeNormal
	if warn {
		typ = corev1.EventTypeWarning
	}
	// events.k8s.io/v1 bounds a note at 1 kB.
	r.Events.Eventf(lab, nil, typ, reason, action, "%s", clip(fmt.Sprintf(msg, args...), 1024))
}

// agentLost says whether err is an agent that does not answer (rather
// than one that answered with an error).
func agentLost(err error) bool {
	var ne net.Error
	var oe *net.OpError
	return errors.As(err, &oe) || errors.As(err, &ne) || errors.Is(err, context.DeadlineExceeded)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n-3], "") + "..."
}
