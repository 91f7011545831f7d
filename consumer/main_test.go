package consumer

import (
	"flag"
	"os"
	"strconv"
	"testing"
)

// brokerTestParallel is how many broker tests run at once unless -parallel is given. They
// spend most of their time waiting on timers and the network (outages, session timeouts),
// not on the CPU, so the default of GOMAXPROCS would leave a 2-core machine idle for most of
// the run; each test has its own embedded broker, so they do not interfere.
const brokerTestParallel = 12

func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		if err := flag.Set("test.parallel", strconv.Itoa(brokerTestParallel)); err != nil {
			panic(err)
		}
	}
	os.Exit(m.Run())
}
