//go:build rocelab_mutants

package connmgr

// defect reports whether the manager carries defect d (Config.Defects).
func (m *Manager) defect(d Defect) bool { return m.cfg.Defects&d != 0 }
