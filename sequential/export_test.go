package sequential

// KSGeometric is ksGeometric for the external studies (study_test.go).
var KSGeometric = ksGeometric
