package perftest

import (
	"fmt"

	"github.com/rocelab/rocelab/endpoint"
)

// Conn is a client QP connected to a server QP, each with a CQ of its own
// and a region of the message size to send from and receive into: what a
// perftest pair, or a flow of the simulator's perf jobs, drives.
type Conn struct {
	C, S     *endpoint.QP // client and server
	CMR, SMR *endpoint.MR
	CCQ, SCQ *endpoint.CQ
}

// Connect registers a region of size bytes in cpd (on client) and spd (on
// server), backed by memory when raw (else address space only), creates a
// CQ and a QP of cfg on each side (cfg's CQs are replaced) and connects
// the two QPs to each other. The errors of the QPs' creation say which
// side failed.
func Connect(client, server *endpoint.NIC, cpd, spd *endpoint.PD, cfg endpoint.QPConfig, size int, raw bool) (Conn, error) {
	acc := endpoint.AccessLocalWrite | endpoint.AccessRemoteWrite | endpoint.AccessRemoteRead
	reg := func(pd *endpoint.PD) (*endpoint.MR, error) {
		if raw {
			return pd.RegMR(make([]byte, size), acc)
		}
		return pd.RegMRLen(uint64(size), acc)
	}
	var c Conn
	var err error
	if c.CMR, err = reg(cpd); err != nil {
		return Conn{}, err
	}
	if c.SMR, err = reg(spd); err != nil {
		return Conn{}, err
	}
	ccfg, scfg := cfg, cfg
	c.CCQ, c.SCQ = client.CreateCQ(0), server.CreateCQ(0)
	ccfg.SendCQ, ccfg.RecvCQ, scfg.SendCQ, scfg.RecvCQ = c.CCQ, c.CCQ, c.SCQ, c.SCQ
	if c.C, err = cpd.CreateQP(ccfg); err != nil {
		return Conn{}, fmt.Errorf("client QP: %w", err)
	}
	if c.S, err = spd.CreateQP(scfg); err != nil {
		return Conn{}, fmt.Errorf("server QP: %w", err)
	}
	if err := c.C.Connect(c.S.Info()); err != nil {
		return Conn{}, err
	}
	if err := c.S.Connect(c.C.Info()); err != nil {
		return Conn{}, err
	}
	return c, nil
}
