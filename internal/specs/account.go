package specs

// What every server the operator creates offers its clients, whichever engine runs it: MySQL's
// port, the benchmark account and its database, and the key of the generated root password in the
// connection Secret, next to the sysbench keys.
const (
	MySQLPort = 3306
	// BenchmarkUser is the account sysbench connects with; the server's first start creates it
	// with all privileges on BenchmarkDatabase (the builtin engine then narrows them to
	// sysbench.Privileges).
	BenchmarkUser     = "sbtest"
	BenchmarkDatabase = "sbtest"
	// SecretKeyRootPassword holds the generated root password next to the sysbench keys.
	SecretKeyRootPassword = "root-password"
)
