// Package v1alpha1 contains the BenchmarkRun API of the mysqlbench.io group.
//
// +kubebuilder:object:generate=true
// +groupName=mysqlbench.io
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of the objects in this package.
	GroupVersion = schema.GroupVersion{Group: "mysqlbench.io", Version: "v1alpha1"}

	// SchemeBuilder registers the Go types of this package with a runtime.Scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the types of this package to a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
