package verdict

import (
	"math"
	"strings"
	"testing"

	av1 "github.com/sluice-dev/sluice/api/analysis/v1alpha1"
)

func TestJudge(t *testing.T) {
	held := func(e string) *Check { return &Check{Expr: e, Held: true} }
	not := func(e string) *Check { return &Check{Expr: e} }
	tests := []struct {
		name             string
		success, failure *Check
		want             av1.Outcome
		wantMsg          string
	}{
		{name: "success holds", success: held("result < 0.05"), want: av1.OutcomeSuccessful},
		{name: "success fails without failure condition", success: not("result < 0.05"), want: av1.OutcomeFailed, wantMsg: "result < 0.05 is false"},
		{name: "failure holds", failure: held("result > 0.1"), want: av1.OutcomeFailed, wantMsg: "result > 0.1"},
		{name: "failure does not hold alone", failure: not("result > 0.1"), want: av1.OutcomeSuccessful},
		{name: "failure wins over success", success: held("result < 1"), failure: held("result > 0.1"), want: av1.OutcomeFailed, wantMsg: "result > 0.1"},
		{name: "success with failure not holding", success: held("result < 0.05"), failure: not("result > 0.1"), want: av1.OutcomeSuccessful},
		{name: "neither holds", success: not("result < 0.05"), failure: not("result > 0.1"), want: av1.OutcomeInconclusive,
			wantMsg: "neither result < 0.05 nor result > 0.1"},
		{name: "no condition", want: av1.OutcomeInconclusive, wantMsg: "no condition to judge by"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, msg := Judge(tt.success, tt.failure)
			if got != tt.want || msg != tt.wantMsg {
				t.Fatalf("Judge() = %s, %q; want %s, %q", got, msg, tt.want, tt.wantMsg)
			}
		})
	}
}

func TestMetric(t *testing.T) {
	tests := []struct {
		name string
		mr   av1.MetricRun
		l    Limits
		want av1.Verdict
	}{
		{name: "nothing measured", l: Limits{Count: 5}, want: av1.VerdictRunning},
		{name: "some measured, all good", mr: av1.MetricRun{Measured: 3, Successful: 3}, l: Limits{Count: 5}, want: av1.VerdictRunning},
		{name: "all measured, all good", mr: av1.MetricRun{Measured: 5, Successful: 5}, l: Limits{Count: 5}, want: av1.VerdictPassed},
		{name: "first failure fails at limit 0", mr: av1.MetricRun{Measured: 1, Failed: 1}, l: Limits{Count: 5}, want: av1.VerdictFailed},
		{name: "failures within the limit", mr: av1.MetricRun{Measured: 5, Successful: 3, Failed: 2}, l: Limits{Count: 5, FailureLimit: 2}, want: av1.VerdictPassed},
		{name: "one failure past the limit fails before the count", mr: av1.MetricRun{Measured: 3, Failed: 3}, l: Limits{Count: 5, FailureLimit: 2}, want: av1.VerdictFailed},
		{name: "inconclusive past the limit", mr: av1.MetricRun{Measured: 2, Successful: 1, Inconclusive: 1}, l: Limits{Count: 5}, want: av1.VerdictInconclusive},
		{name: "inconclusive within the limit", mr: av1.MetricRun{Measured: 5, Successful: 4, Inconclusive: 1}, l: Limits{Count: 5, InconclusiveLimit: 1}, want: av1.VerdictPassed},
		{name: "failure wins over inconclusive", mr: av1.MetricRun{Measured: 2, Failed: 1, Inconclusive: 1}, l: Limits{Count: 5}, want: av1.VerdictFailed},
		{name: "all measured, none succeeded", mr: av1.MetricRun{Measured: 2, Inconclusive: 2}, l: Limits{Count: 2, InconclusiveLimit: 2}, want: av1.VerdictInconclusive},
		{name: "no end keeps running", mr: av1.MetricRun{Measured: 500, Successful: 500}, l: Limits{}, want: av1.VerdictRunning},
		{name: "no end still fails", mr: av1.MetricRun{Measured: 500, Successful: 499, Failed: 1}, l: Limits{}, want: av1.VerdictFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Metric(&tt.mr, tt.l); got != tt.want {
				t.Fatalf("Metric() = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestConclude(t *testing.T) {
	tests := []struct {
		name string
		mr   av1.MetricRun
		l    Limits
		want av1.Verdict
	}{
		{name: "running with successes passes", mr: av1.MetricRun{Measured: 3, Successful: 3}, want: av1.VerdictPassed},
		{name: "running without success is inconclusive", mr: av1.MetricRun{Measured: 1, Inconclusive: 1}, l: Limits{InconclusiveLimit: 3}, want: av1.VerdictInconclusive},
		{name: "nothing measured is inconclusive", want: av1.VerdictInconclusive},
		{name: "a failed metric stays failed", mr: av1.MetricRun{Measured: 3, Successful: 2, Failed: 1}, want: av1.VerdictFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Conclude(&tt.mr, tt.l); got != tt.want {
				t.Fatalf("Conclude() = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestAnalysis(t *testing.T) {
	m := func(vs ...av1.Verdict) []av1.MetricRun {
		var out []av1.MetricRun
		for _, v := range vs {
			out = append(out, av1.MetricRun{Verdict: v})
		}
		return out
	}
	tests := []struct {
		name    string
		metrics []av1.MetricRun
		want    av1.Verdict
	}{
		{name: "no metrics", want: av1.VerdictRunning},
		{name: "all passed", metrics: m(av1.VerdictPassed, av1.VerdictPassed), want: av1.VerdictPassed},
		{name: "one still running", metrics: m(av1.VerdictPassed, av1.VerdictRunning), want: av1.VerdictRunning},
		{name: "one failed while others run", metrics: m(av1.VerdictRunning, av1.VerdictFailed), want: av1.VerdictFailed},
		{name: "failed wins over inconclusive", metrics: m(av1.VerdictInconclusive, av1.VerdictFailed), want: av1.VerdictFailed},
		{name: "inconclusive while others run", metrics: m(av1.VerdictInconclusive, av1.VerdictRunning), want: av1.VerdictInconclusive},
		{name: "inconclusive and passed", metrics: m(av1.VerdictPassed, av1.VerdictInconclusive), want: av1.VerdictInconclusive},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Analysis(tt.metrics); got != tt.want {
				t.Fatalf("Analysis() = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestRecord_countsEachIndexOnceAndKeepsTheLastHistory(t *testing.T) {
	l := Limits{Count: 5, FailureLimit: 1}
	mr := &av1.MetricRun{Name: "error-rate", Verdict: av1.VerdictRunning}
	ok := func(i int32, v string) av1.Measurement {
		return av1.Measurement{Index: i, Value: v, Outcome: av1.OutcomeSuccessful}
	}
	for i := int32(1); i <= 3; i++ {
		if !Record(mr, ok(i, "0.01"), l, 2) {
			t.Fatalf("measurement %d refused", i)
		}
	}
	if Record(mr, ok(3, "0.01"), l, 2) {
		t.Fatal("measurement 3 recorded twice")
	}
	if Record(mr, ok(5, "0.01"), l, 2) {
		t.Fatal("measurement 5 recorded before 4")
	}
	if mr.Measured != 3 || mr.Successful != 3 || len(mr.Measurements) != 2 || mr.Measurements[0].Index != 2 {
		t.Fatalf("after 3 measurements: %+v", mr)
	}
	if mr.Message != "error-rate 0.01 (3/5 passed)" {
		t.Fatalf("message %q", mr.Message)
	}
	Record(mr, av1.Measurement{Index: 4, Value: "0.2", Outcome: av1.OutcomeFailed, Message: "result < 0.05 is false"}, l, 2)
	if mr.Verdict != av1.VerdictRunning {
		t.Fatalf("one failure within failureLimit 1: verdict %s", mr.Verdict)
	}
	Record(mr, av1.Measurement{Index: 5, Value: "0.3", Outcome: av1.OutcomeFailed, Message: "result < 0.05 is false"}, l, 2)
	if mr.Verdict != av1.VerdictFailed || mr.Message != "error-rate 0.3: result < 0.05 is false (2 failed, failureLimit 1)" {
		t.Fatalf("two failures past failureLimit 1: %s %q", mr.Verdict, mr.Message)
	}
	if Record(mr, av1.Measurement{Index: 6, Outcome: av1.OutcomeSuccessful}, l, 2) {
		t.Fatal("a measurement recorded after the metric's verdict was final")
	}
}

func TestMetricMessage(t *testing.T) {
	meas := func(o av1.Outcome, v, msg string) av1.Measurement {
		return av1.Measurement{Outcome: o, Value: v, Message: msg}
	}
	tests := []struct {
		name string
		mr   av1.MetricRun
		l    Limits
		want string
	}{
		{name: "waiting", mr: av1.MetricRun{Name: "error-rate"}, l: Limits{Count: 5}, want: "error-rate: waiting for the first measurement"},
		{name: "running", l: Limits{Count: 5}, want: "error-rate 0.004 (3/5 passed)",
			mr: av1.MetricRun{Name: "error-rate", Verdict: av1.VerdictRunning, Measured: 3, Successful: 3, Measurements: []av1.Measurement{meas(av1.OutcomeSuccessful, "0.004", "")}}},
		{name: "running, no end", want: "error-rate 0.004 (7 passed)",
			mr: av1.MetricRun{Name: "error-rate", Verdict: av1.VerdictRunning, Measured: 7, Successful: 7, Measurements: []av1.Measurement{meas(av1.OutcomeSuccessful, "0.004", "")}}},
		{name: "running after an error", l: Limits{Count: 5, InconclusiveLimit: 2}, want: "error-rate: connection refused (2/5 passed)",
			mr: av1.MetricRun{Name: "error-rate", Verdict: av1.VerdictRunning, Measured: 3, Successful: 2, Inconclusive: 1, Measurements: []av1.Measurement{meas(av1.OutcomeError, "", "connection refused")}}},
		{name: "failed at once", l: Limits{Count: 5}, want: "error-rate 0.12: result < 0.05 is false",
			mr: av1.MetricRun{Name: "error-rate", Verdict: av1.VerdictFailed, Measured: 1, Failed: 1, Measurements: []av1.Measurement{meas(av1.OutcomeFailed, "0.12", "result < 0.05 is false")}}},
		{name: "inconclusive past its limit", l: Limits{Count: 5, InconclusiveLimit: 1}, want: "latency: Prometheus unreachable (2 inconclusive, inconclusiveLimit 1)",
			mr: av1.MetricRun{Name: "latency", Verdict: av1.VerdictInconclusive, Measured: 3, Successful: 1, Inconclusive: 2,
				Measurements: []av1.Measurement{meas(av1.OutcomeError, "", "Prometheus unreachable"), meas(av1.OutcomeSuccessful, "3", "")}}},
		{name: "none succeeded", l: Limits{Count: 2, InconclusiveLimit: 5}, want: "latency: no measurement succeeded (2 measured)",
			mr: av1.MetricRun{Name: "latency", Verdict: av1.VerdictInconclusive, Measured: 2, Inconclusive: 2, Measurements: []av1.Measurement{meas(av1.OutcomeInconclusive, "3", "neither")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := MetricMessage(&tt.mr, tt.l); got != tt.want {
				t.Fatalf("MetricMessage() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestSummarise(t *testing.T) {
	run := &av1.AnalysisRun{Metrics: []av1.MetricRun{
		{Name: "error-rate", Verdict: av1.VerdictFailed, Message: "error-rate 0.12: result < 0.05 is false"},
		{Name: "latency", Verdict: av1.VerdictRunning, Message: "latency 120 (1/5 passed)"},
	}}
	Summarise(run)
	if run.Verdict != av1.VerdictFailed || run.Message != "error-rate 0.12: result < 0.05 is false" {
		t.Fatalf("failed run: %s %q", run.Verdict, run.Message)
	}
	run.Metrics[0] = av1.MetricRun{Name: "error-rate", Verdict: av1.VerdictPassed, Message: "error-rate 0.004 (5/5 passed)"}
	Summarise(run)
	if run.Verdict != av1.VerdictRunning || run.Message != "error-rate 0.004 (5/5 passed), latency 120 (1/5 passed)" {
		t.Fatalf("running run: %s %q", run.Verdict, run.Message)
	}
}

func TestDisplay(t *testing.T) {
	tests := []struct {
		name string
		v    any
		want string
	}{
		{name: "small ratio", v: 0.0041234, want: "0.004123"},
		{name: "whole number", v: 200.0, want: "200"},
		{name: "large", v: 1234567.891, want: "1.235e+06"},
		{name: "NaN", v: math.NaN(), want: "NaN"},
		{name: "int", v: int64(3), want: "3"},
		{name: "bool", v: true, want: "true"},
		{name: "string", v: "ok", want: "ok"},
		{name: "null", v: nil, want: "null"},
		{name: "list", v: []any{0.5, "a"}, want: `[0.5,"a"]`},
		{name: "map", v: map[string]any{"a": 1.0}, want: `{"a":1}`},
		{name: "long string", v: strings.Repeat("é", 200), want: strings.Repeat("é", 126) + "..."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Display(tt.v)
			if got != tt.want {
				t.Fatalf("Display() = %q, want %q", got, tt.want)
			}
			if len(got) > MaxValue {
				t.Fatalf("Display() is %d bytes long", len(got))
			}
		})
	}
}
