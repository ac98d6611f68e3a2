package host

// Unexported helpers the external fixture test (fixture_test.go, package
// host_test so that it may import the offline engine, which imports host)
// needs to name a fixture's project dirs as the agents do.
var (
	SanitizeProjectName = sanitizeProjectName
	CodebotProjectID    = codebotProjectID
)
