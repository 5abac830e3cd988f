package dashboards

import (
	"encoding/json"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/variants"
	"github.com/grafana/grafana-foundation-sdk/go/common"
)

// The SDK knows no query of Grafana's MySQL data source, so the history dashboard brings its own:
// a raw SQL query as the MySQL query editor saves it in code mode.

// MySQLFormat is how Grafana turns a MySQL query's rows into data frames.
type MySQLFormat string

// The formats the history dashboard uses.
const (
	MySQLFormatTable      MySQLFormat = "table"
	MySQLFormatTimeSeries MySQLFormat = "time_series"
)

// mysqlPluginID is the plugin id of Grafana's MySQL data source, which a query names as its type.
const mysqlPluginID = "mysql"

// MySQLQuery is a raw SQL query of a MySQL data source.
type MySQLQuery struct {
	Datasource *common.DataSourceRef `json:"datasource,omitempty"`
	RefId      string                `json:"refId"`
	Hide       *bool                 `json:"hide,omitempty"`
	Format     MySQLFormat           `json:"format,omitempty"`
	// RawQuery and EditorMode "code" keep Grafana's editor on the SQL text instead of trying to
	// rebuild it in its visual query builder, which cannot express these joins.
	RawQuery   bool   `json:"rawQuery"`
	EditorMode string `json:"editorMode,omitempty"`
	RawSql     string `json:"rawSql"`
}

var _ variants.Dataquery = MySQLQuery{}

// ImplementsDataqueryVariant marks MySQLQuery as a query the SDK's panels accept.
func (MySQLQuery) ImplementsDataqueryVariant() {}

// DataqueryType is the plugin the query belongs to.
func (MySQLQuery) DataqueryType() string { return mysqlPluginID }

// Validate reports a query Grafana could not run: one without SQL or without a refId.
func (q MySQLQuery) Validate() error {
	var errs cog.BuildErrors
	if q.RefId == "" {
		errs = append(errs, cog.MakeBuildErrors("refId", errEmpty)...)
	}
	if q.RawSql == "" {
		errs = append(errs, cog.MakeBuildErrors("rawSql", errEmpty)...)
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// Equals compares two queries field by field.
func (q MySQLQuery) Equals(other variants.Dataquery) bool {
	o, ok := other.(MySQLQuery)
	if !ok {
		return false
	}
	sameRef := (q.Datasource == nil) == (o.Datasource == nil) &&
		(q.Datasource == nil || ptrEq(q.Datasource.Type, o.Datasource.Type) && ptrEq(q.Datasource.Uid, o.Datasource.Uid))
	return sameRef && q.RefId == o.RefId && ptrEq(q.Hide, o.Hide) && q.Format == o.Format &&
		q.RawQuery == o.RawQuery && q.EditorMode == o.EditorMode && q.RawSql == o.RawSql
}

func ptrEq[T comparable](a, b *T) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}

// MySQLQueryVariantConfig lets the SDK's runtime decode dashboards holding MySQL queries.
func MySQLQueryVariantConfig() variants.DataqueryConfig {
	return variants.DataqueryConfig{
		Identifier: mysqlPluginID,
		DataqueryUnmarshaler: func(raw []byte) (variants.Dataquery, error) {
			var q MySQLQuery
			if err := json.Unmarshal(raw, &q); err != nil {
				return nil, err
			}
			return q, nil
		},
	}
}

// MySQLQueryBuilder builds a raw SQL query in code mode.
type MySQLQueryBuilder struct {
	q MySQLQuery
}

var _ cog.Builder[variants.Dataquery] = (*MySQLQueryBuilder)(nil)

// NewMySQLQueryBuilder starts a raw SQL query of sql.
func NewMySQLQueryBuilder(sql string) *MySQLQueryBuilder {
	return &MySQLQueryBuilder{q: MySQLQuery{RawSql: sql, RawQuery: true, EditorMode: "code"}}
}

// Build returns the query, or why Grafana could not run it.
func (b *MySQLQueryBuilder) Build() (variants.Dataquery, error) {
	if err := b.q.Validate(); err != nil {
		return MySQLQuery{}, err
	}
	return b.q, nil
}

// RefId names the query within its panel.
func (b *MySQLQueryBuilder) RefId(refID string) *MySQLQueryBuilder {
	b.q.RefId = refID
	return b
}

// Datasource sets the data source the query runs on.
func (b *MySQLQueryBuilder) Datasource(ds common.DataSourceRef) *MySQLQueryBuilder {
	b.q.Datasource = &ds
	return b
}

// Format sets how the rows become data frames.
func (b *MySQLQueryBuilder) Format(f MySQLFormat) *MySQLQueryBuilder {
	b.q.Format = f
	return b
}

// Hide keeps the query from running.
func (b *MySQLQueryBuilder) Hide(hide bool) *MySQLQueryBuilder {
	b.q.Hide = &hide
	return b
}
