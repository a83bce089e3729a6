package deploy

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/rocelab/rocelab/internal/jsonapi"
	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
)

// HealthUnreachable starts the Health of a node that spans machines whose
// agent cannot be asked about it: the agent is down, refuses the token,
// or has no part of the lab. The node's process may well run on; rocelab
// restart goes through the same agent, so it cannot help.
const HealthUnreachable = "unreachable: "

// AgentTrouble says what is wrong with the agent (agent, its URL) of
// machine, through which a call about lab's node failed with err, when
// the agent rather than the node is at fault, and what helps; "" when
// the node is (its process gone or not answering: the agent said so, 502)
// or err is nil.
func AgentTrouble(lab, machine, agent string, err error) string {
	if err == nil || machine == "" {
		return ""
	}
	var ae *nodeapi.APIError
	var se *jsonapi.StatusError
	status := 0
	switch {
	case errors.As(err, &ae):
		status = ae.Status
	case errors.As(err, &se):
		status = se.Status
	}
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return fmt.Sprintf("machine %s's agent %s refuses the token sent (%d): set $%s or $%s to the token the lab's agents were started with (their --token-file)",
			machine, agent, status, jsonapi.TokenEnv, jsonapi.TokenFileEnv)
	case status == http.StatusNotFound:
		return fmt.Sprintf("machine %s's agent %s has no part of lab %s (a new agent, or the machine rebooted): rocelab deploy --repair --name %s deploys it again",
			machine, agent, lab, lab)
	case status != 0:
		return "" // the agent answered about the node: 502 is the node's
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("machine %s is unreachable: its agent %s does not answer in time: is the agent running, and the underlay up? (rocelab agent on %s, or its pod on Kubernetes)", machine, agent, machine)
	case errors.As(err, new(*url.Error)):
		return fmt.Sprintf("machine %s is unreachable: its agent %s does not answer (%s): start the agent again (rocelab agent on %s, or its pod on Kubernetes): the node processes run on without it, and restarting them cannot help while it is down",
			machine, agent, rootCause(err), machine)
	}
	return ""
}

// agentOf is the URL of the agent of machine in l ("" if none).
func agentOf(l *Lab, machine string) string {
	for _, m := range l.Machines {
		if m.Name == machine {
			return m.Agent
		}
	}
	return ""
}

// unreachable groups the nodes of l whose agent cannot be asked about
// them (HealthUnreachable) into one Problem per machine, in l's order.
func unreachable(l *Lab) []Problem {
	var out []Problem
	at := map[string]int{}
	for _, n := range l.Nodes {
		why, ok := strings.CutPrefix(n.Health, HealthUnreachable)
		if !ok {
			continue
		}
		if i, ok := at[n.Machine]; ok {
			out[i].Node += ", " + n.Name
			continue
		}
		at[n.Machine] = len(out)
		out = append(out, Problem{Node: n.Name, What: "unreachable", Machine: n.Machine, Detail: why})
	}
	return out
}
