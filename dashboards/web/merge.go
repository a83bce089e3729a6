package web

// merge returns one frame standing for consecutive frames (at least one)
// of a recording, at the last one's time: what any of them showed stays
// visible — the deepest queue, a pause in any of them — and rates are the
// frames' means. Nodes and faults are the last frame's.
func merge(fs []Frame) Frame {
	last := fs[len(fs)-1]
	if len(fs) == 1 {
		return last
	}
	out := Frame{FabricTime: last.FabricTime, Queues: map[string]int{}, Nodes: last.Nodes, Faults: last.Faults}
	out.Links = make([]LinkState, len(last.Links))
	copy(out.Links, last.Links)
	k := float64(len(fs))
	for i := range out.Links {
		out.Links[i].UtilAB, out.Links[i].UtilBA = 0, 0
	}
	for _, f := range fs {
		for i, l := range f.Links {
			if i >= len(out.Links) {
				break
			}
			o := &out.Links[i]
			o.UtilAB += l.UtilAB / k
			o.UtilBA += l.UtilBA / k
			o.PFCAB = o.PFCAB || l.PFCAB
			o.PFCBA = o.PFCBA || l.PFCBA
		}
		for q, v := range f.Queues {
			out.Queues[q] = max(out.Queues[q], v)
		}
	}
	out.QPs = meanRates(fs, func(f Frame) []Rate { return f.QPs })
	out.Collective = meanRates(fs, func(f Frame) []Rate { return f.Collective })
	return out
}

// meanRates averages the named rates of frames over all of them (a name
// missing from a frame counts 0 there), in the order of their first
// appearance.
func meanRates(fs []Frame, of func(Frame) []Rate) []Rate {
	var out []Rate
	idx := map[string]int{}
	for _, f := range fs {
		for _, r := range of(f) {
			i, ok := idx[r.Name]
			if !ok {
				i = len(out)
				idx[r.Name] = i
				out = append(out, Rate{Name: r.Name})
			}
			out[i].Bps += r.Bps / float64(len(fs))
		}
	}
	return out
}
