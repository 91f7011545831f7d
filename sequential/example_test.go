package sequential_test

import (
	"fmt"

	"github.com/distfeat/distfeat/sequential"
)

// A detector calibrated for one false alarm per 1000 windows, fed the p-values of a set's
// windows in order: quiet windows keep the statistic at 0, a run of small p-values alarms
// and the state resets. (The statistic moves by −ln p − 1.5 per window, in steps of 1/c:
// 2.40 after p = 0.02, where −ln 0.02 − 1.5 = 2.41.)
func ExampleCalibrate() {
	d, err := sequential.Calibrate(1000, 0)
	if err != nil {
		panic(err)
	}
	fmt.Printf("threshold %.3f (ERT %.0f windows)\n", d.Threshold(), d.ERT())
	var st sequential.State
	for i, p := range []float64{0.6, 0.3, 0.9, 0.02, 0.05, 0.01, 0.03, 0.004} {
		var step sequential.Step
		st, step = d.Update(st, p)
		fmt.Printf("window %d: p %.3f statistic %.2f alarm %v run %d\n", i, p, step.Statistic, step.Alarm, step.Run)
	}
	// Output:
	// threshold 7.792 (ERT 1000 windows)
	// window 0: p 0.600 statistic 0.00 alarm false run 0
	// window 1: p 0.300 statistic 0.00 alarm false run 0
	// window 2: p 0.900 statistic 0.00 alarm false run 0
	// window 3: p 0.020 statistic 2.40 alarm false run 1
	// window 4: p 0.050 statistic 3.90 alarm false run 2
	// window 5: p 0.010 statistic 7.00 alarm false run 3
	// window 6: p 0.030 statistic 9.01 alarm true run 4
	// window 7: p 0.004 statistic 4.02 alarm false run 1
}
