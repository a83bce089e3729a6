// Package grafana holds rocelab's Grafana dashboards as code: Dashboards
// describes every panel and its PromQL; Generate builds them with the
// Grafana Foundation SDK into the JSON files of dashboards/grafana/json,
// which provisioning/ loads into a stock Grafana (`make dashboards`
// regenerates them; a test fails when the committed files differ, and
// another runs every query against a real Prometheus scraping a live lab).
package grafana

import (
	"encoding/json"
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/variants"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/heatmap"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
)

// Generate returns every dashboard as indented JSON, by file name.
func Generate() (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, d := range Dashboards() {
		b, err := build(d)
		if err != nil {
			return nil, fmt.Errorf("dashboard %s: %w", d.UID, err)
		}
		out[d.UID+".json"] = b
	}
	return out, nil
}

func dsRef() common.DataSourceRef {
	typ, uid := "prometheus", "${datasource}"
	return common.DataSourceRef{Type: &typ, Uid: &uid}
}

func build(d Dashboard) ([]byte, error) {
	labQuery := "label_values(rocelab_node_up, lab)"
	b := dashboard.NewDashboardBuilder(d.Title).
		Uid(d.UID).
		Description(d.Description).
		Tags([]string{"rocelab", "roce", "pfc"}).
		Refresh("5s").
		Time("now-15m", "now").
		Timezone(common.TimeZoneBrowser).
		Readonly().
		WithVariable(dashboard.NewDatasourceVariableBuilder("datasource").Label("Prometheus").Type("prometheus")).
		WithVariable(dashboard.NewQueryVariableBuilder("lab").Label("lab").
			Datasource(dsRef()).
			Query(dashboard.StringOrMap{String: &labQuery}).
			Refresh(dashboard.VariableRefreshOnTimeRangeChanged)).
		Annotation(dashboard.NewAnnotationQueryBuilder().
			Name("faults").
			Datasource(dsRef()).
			Enable(true).
			IconColor("purple").
			Target(prometheus.NewDataqueryBuilder().Expr(FaultAnnotation).RefId("faults")))
	for _, p := range d.Panels {
		b = b.WithPanel(panel(p))
	}
	dash, err := b.Build()
	if err != nil {
		return nil, err
	}
	out, err := json.MarshalIndent(dash, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

func targets(p Panel) []cog.Builder[variants.Dataquery] {
	var ts []cog.Builder[variants.Dataquery]
	for i, q := range p.Exprs {
		ts = append(ts, prometheus.NewDataqueryBuilder().
			Expr(q.Expr).
			LegendFormat(q.Legend).
			RefId(string(rune('A'+i))).
			Datasource(dsRef()))
	}
	return ts
}

func panel(p Panel) cog.Builder[dashboard.Panel] {
	switch p.Kind {
	case "heatmap":
		return heatmap.NewPanelBuilder().Title(p.Title).Description(p.Description).Unit(p.Unit).
			Datasource(dsRef()).Targets(targets(p)).Height(9).Span(12)
	case "stat":
		return stat.NewPanelBuilder().Title(p.Title).Description(p.Description).Unit(p.Unit).
			Datasource(dsRef()).Targets(targets(p)).Height(6).Span(6)
	}
	return timeseries.NewPanelBuilder().Title(p.Title).Description(p.Description).Unit(p.Unit).Min(0).
		Datasource(dsRef()).Targets(targets(p)).Height(9).Span(12)
}
