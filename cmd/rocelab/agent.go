package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/rocelab/rocelab/internal/jsonapi"
	"github.com/rocelab/rocelab/internal/labca"
	"github.com/rocelab/rocelab/lab/cluster/agent"
	"github.com/rocelab/rocelab/lab/cluster/agentapi"
	"github.com/rocelab/rocelab/lab/emulation/datapath/links"
)

// newAgentCmd is `rocelab agent`: one machine's share of the labs that
// span machines (docs/multi-machine.md).
func newAgentCmd(opts *options) *cobra.Command {
	var (
		listen, machine, underlay, dev, root, tokenFile string
		port                                            uint16
		k                                               kubeFlags
		insecure                                        bool
		tlsDir                                          string
	)
	cmd := &cobra.Command{
		Use:   "agent --underlay ADDR [--listen ADDR:PORT] [--machine NAME] [--underlay-dev IF]",
		Short: "Run this machine's part of labs that span machines",
		Long: `Agent serves, on one machine, its share of every lab that spans machines:
rocelab deploy --agents A,B,… on any machine places the lab over the agents'
machines, and each agent builds its part with the netns runtime — its nodes,
veth pairs between them, and one VXLAN tunnel (UDP 14789) per link to another
machine — and serves its nodes' APIs, so that inspect, stats, perf,
collective, fault, exec, capture and destroy work from the deploying
machine. With --token-file (or $ROCELAB_AGENT_TOKEN) every request must
carry that token: the commands that reach the agents send the one in
their environment ($ROCELAB_AGENT_TOKEN or $ROCELAB_AGENT_TOKEN_FILE). With
--kubeconfig (or inside a pod) it also announces itself with a Lease in
--namespace, where rocelab-controller finds it.

--underlay is this machine's address on the network between the machines
(the far end of the tunnels to it); --listen defaults to it, port 7470.
Listen only on a network that only the lab's machines reach: the API
deploys labs and runs commands in their nodes as root. A token is required
(--insecure serves without one), and wildcard addresses (0.0.0.0, ::) are
refused for --underlay and --listen. The agent serves only the labs it
deployed itself: a lab deployed on its machine without agents is not its to
show, repair or exec into. At start it restarts the nodes of its parts that
died while it was away. Needs root.`,
		Example: `  rocelab agent --underlay 10.0.0.11 --token-file /etc/rocelab/token --tls-dir /etc/rocelab/ca
  rocelab agent --underlay 10.0.0.12 --listen 10.0.0.12:7470 --token-file /etc/rocelab/token --tls-dir /etc/rocelab/ca`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ul, err := netip.ParseAddr(underlay)
			if err != nil {
				return badInput(fmt.Errorf("--underlay %q: want this machine's IP address toward the others", underlay))
			}
			if ul.IsUnspecified() {
				return badInput(fmt.Errorf("--underlay %s: a wildcard address is not this machine's address toward the others (and would serve the API on every interface): give that address", underlay))
			}
			if listen == "" {
				listen = net.JoinHostPort(ul.String(), strconv.Itoa(agentapi.DefaultPort))
			}
			if err := checkListen(listen); err != nil {
				return badInput(err)
			}
			if machine == "" {
				if machine, err = os.Hostname(); err != nil {
					return err
				}
			}
			if err := requireRoot("agent"); err != nil {
				return err
			}
			token, err := jsonapi.TokenFromEnv()
			if tokenFile != "" {
				token, err = jsonapi.ReadToken(tokenFile)
			}
			if err != nil {
				return badInput(err)
			}
			if token == "" && !insecure {
				return badInput(fmt.Errorf("no token: anyone who reaches %s could deploy labs and run commands in their nodes as root; give --token-file (or $%s), or --insecure on a network only the lab's machines reach", listen, jsonapi.TokenEnv))
			}
			if token == "" {
				fmt.Fprintf(opts.stderr, "warning: --insecure, no token: anyone who reaches %s can deploy labs and run commands in their nodes as root\n", listen)
			}
			s, err := agent.New(agent.Config{Machine: machine, Underlay: ul, Device: dev, VXLANPort: port, Root: root, Version: version, Log: opts.log, Token: token})
			if err != nil {
				return badInput(err)
			}
			var tlsCfg *tls.Config
			if tlsDir != "" {
				ca, made, err := labca.LoadOrCreate(tlsDir)
				if err != nil {
					return badInput(fmt.Errorf("--tls-dir %s: %w", tlsDir, err))
				}
				if made {
					fmt.Fprintf(opts.stderr, "made a lab CA in %s: copy the directory to the lab's other machines (their agents' --tls-dir) and give the machines that run rocelab commands %s=%s\n",
						tlsDir, labca.EnvCA, filepath.Join(tlsDir, labca.CertFile))
				}
				host, _, _ := net.SplitHostPort(listen)
				if tlsCfg, err = ca.ServerConfig(host, machine); err != nil {
					return fmt.Errorf("agent: %w", err)
				}
			} else {
				fmt.Fprintf(opts.stderr, "warning: plain HTTP: the token crosses the underlay in clear text (--tls-dir DIR serves TLS with a lab CA)\n")
			}
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return fmt.Errorf("agent: %w", err)
			}
			if tlsCfg != nil {
				ln = tls.NewListener(ln, tlsCfg)
			}
			fmt.Fprintf(opts.stderr, "agent %s serving on %s (underlay %s)\n", machine, ln.Addr(), ul)
			ctx := cmdContext(cmd)
			if cmd.Flags().Changed("kubeconfig") || os.Getenv("KUBERNETES_SERVICE_HOST") != "" {
				c, err := k.client()
				if err != nil {
					ln.Close()
					return err
				}
				actx, stop := context.WithCancel(ctx)
				announced := make(chan struct{})
				go func() { c.Announce(actx, k.namespace, machine, ln.Addr().String(), opts.log); close(announced) }()
				defer func() { stop(); <-announced }()
			}
			return s.Run(ctx, ln)
		},
	}
	cmd.Flags().StringVar(&underlay, "underlay", "", "this machine's address toward the other machines (required)")
	cmd.Flags().StringVar(&listen, "listen", "", "address:port of the API (default: the underlay address, port 7470)")
	cmd.Flags().StringVar(&machine, "machine", "", "this machine's name (default: the host name)")
	cmd.Flags().StringVar(&dev, "underlay-dev", "", "interface the tunnels leave by (default: the one the route to each far machine leaves by); its MTU is checked either way")
	cmd.Flags().Uint16Var(&port, "vxlan-port", links.DefaultVXLANPort, "UDP port of the VXLAN tunnels")
	limit(cmd.Flags(), "vxlan-port", 1, 65535)
	cmd.Flags().StringVar(&tokenFile, "token-file", "", "file whose first line is the token every request must carry (default $ROCELAB_AGENT_TOKEN or $ROCELAB_AGENT_TOKEN_FILE; none: no check)")
	cmd.Flags().StringVar(&tlsDir, "tls-dir", "", "serve TLS with a certificate issued from the lab CA in this directory (ca.pem, ca-key.pem; made there if it holds none): the same directory on every machine of the lab, and $ROCELAB_AGENT_CA=DIR/ca.pem where rocelab commands run")
	cmd.Flags().BoolVar(&insecure, "insecure", false, "serve without a token (anyone who reaches --listen can run commands as root in the labs' nodes)")
	k.add(cmd)
	cmd.MarkFlagRequired("underlay")
	addRootFlag(cmd, &root)
	return cmd
}

// checkListen refuses a wildcard listen address: the agent's API runs
// commands as root, so it listens on the one address it is given.
func checkListen(listen string) error {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return fmt.Errorf("--listen %q: want ADDR:PORT", listen)
	}
	if host == "" {
		return fmt.Errorf("--listen %s: an empty address listens on every interface; give the underlay address", listen)
	}
	if a, err := netip.ParseAddr(host); err == nil && a.IsUnspecified() {
		return fmt.Errorf("--listen %s: a wildcard address serves the API on every interface; give the underlay address", listen)
	}
	return nil
}
