package engine

import (
	"context"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	builtindriver "github.com/mysqlbench/mysqlbench-operator/internal/engine/builtin/driver"
	"github.com/mysqlbench/mysqlbench-operator/internal/engine/describe"
	externaldriver "github.com/mysqlbench/mysqlbench-operator/internal/engine/external/driver"
	perconadriver "github.com/mysqlbench/mysqlbench-operator/internal/engine/percona/driver"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

// wiring is what a driver is built from: a manager's cached client (the operator's own
// objects), its direct API reader (the user's objects, and confirmations past the cache) and
// its scheme.
type wiring func(c client.Client, reader client.Reader, scheme *runtime.Scheme) Engine

// driver adapts an engine package's constructor to wiring.
func driver[E Engine](newEngine func(client.Client, client.Reader, *runtime.Scheme) E) wiring {
	return func(c client.Client, reader client.Reader, scheme *runtime.Scheme) Engine {
		return newEngine(c, reader, scheme)
	}
}

// drivers is every engine's driver constructor, by the name targets give it (targets[].engine,
// the API's enum); package describe has each one's description. A new engine is a line in each.
var drivers = map[v1.Engine]wiring{
	v1.EngineBuiltin:              driver(builtindriver.New),
	v1.EngineExternal:             driver(externaldriver.New),
	v1.EnginePerconaServer:        driver(perconadriver.NewServer),
	v1.EnginePerconaXtraDBCluster: driver(perconadriver.NewXtraDBCluster),
}

// All returns every engine the operator has, wired to a manager's cached client (the operator's
// own objects), its direct API reader (the user's objects) and scheme.
func All(c client.Client, reader client.Reader, scheme *runtime.Scheme) map[v1.Engine]Engine {
	out := make(map[v1.Engine]Engine, len(drivers))
	for name, newDriver := range drivers {
		out[name] = newDriver(c, reader, scheme)
	}
	return out
}

// Describers returns every engine's description (package describe); nothing they do reaches a
// cluster.
func Describers() map[v1.Engine]Describer { return describe.All() }

// ListHoldings lists, through reader, the servers of every engine that has a list of them
// (Describer.ServerList), with the operator's labels, and returns each engine's Holdings among
// them, engines in name order.
func ListHoldings(ctx context.Context, reader client.Reader, engines map[v1.Engine]Engine,
	runs map[client.ObjectKey]*v1.BenchmarkRun) ([]Holding, error) {
	names := make([]v1.Engine, 0, len(engines))
	for name := range engines {
		names = append(names, name)
	}
	slices.Sort(names)
	var out []Holding
	for _, name := range names {
		list := engines[name].ServerList()
		if list == nil {
			continue
		}
		if err := reader.List(ctx, list, client.MatchingLabels{specs.LabelManagedBy: specs.ManagedBy}); err != nil {
			return nil, fmt.Errorf("list the servers of engine %s: %w", name, err)
		}
		out = append(out, engines[name].Holdings(list, runs)...)
	}
	return out, nil
}

// The optional interfaces the controller asks for.
var (
	_ Replacer         = (*builtindriver.Engine)(nil)
	_ ForeignKind      = (*perconadriver.Engine)(nil)
	_ DeletionReleaser = (*perconadriver.Engine)(nil)
)
