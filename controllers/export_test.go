package controllers

import "k8s.io/client-go/rest"

// envConfig is the suite's API server (suite_test.go starts it) for the internal tests that need
// one.
var envConfig *rest.Config

// UseEnvConfig hands the internal tests the suite's API server.
func UseEnvConfig(cfg *rest.Config) { envConfig = cfg }
