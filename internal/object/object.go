// Package object names a Kubernetes object and a list of them as controller-runtime's client
// package does (client.Object, client.ObjectList), for the packages the kubectl plugin links:
// importing controller-runtime's client registers every built-in API group of client-go in a
// scheme at init, and with it links every group's types and codecs, most of the plugin's size.
// The interfaces are the same method sets, so values pass freely between the two.
package object

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Object is an API object with metadata: what controller-runtime's client.Object is.
type Object interface {
	metav1.Object
	runtime.Object
}

// List is a list of API objects: what controller-runtime's client.ObjectList is.
type List interface {
	metav1.ListInterface
	runtime.Object
}
