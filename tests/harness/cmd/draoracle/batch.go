package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"runtime"
	"sync"
)

// batchScenario is one line of batch input.
type batchScenario struct {
	ID                string            `json:"id"`
	Objects           []json.RawMessage `json:"objects"`
	Pod               string            `json:"pod,omitempty"`
	Claim             string            `json:"claim,omitempty"`
	KubernetesVersion string            `json:"kubernetesVersion,omitempty"`
	FeatureGates      map[string]bool   `json:"featureGates,omitempty"`
	Node              string            `json:"node,omitempty"`
}

// batchAnswer is one line of batch output: a report, or the error that kept the scenario from
// being evaluated (bad input, unknown target).
type batchAnswer struct {
	ID     string  `json:"id"`
	Report *report `json:"report,omitempty"`
	Error  string  `json:"error,omitempty"`
}

// runBatch evaluates scenarios read as JSON lines, answering in input order. Scenarios are spread
// over workers; one process serves thousands of scenarios without paying start-up per scenario.
func runBatch(args []string, stdin io.Reader, stdout io.Writer) error {
	flags := flag.NewFlagSet("draoracle batch", flag.ContinueOnError)
	workers := flags.Int("workers", runtime.GOMAXPROCS(0), "scenarios evaluated in parallel")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if *workers < 1 {
		*workers = 1
	}

	type job struct {
		line   []byte
		answer chan batchAnswer
	}
	jobs := make(chan job, *workers*2)
	ordered := make(chan chan batchAnswer, *workers*2)
	var wg sync.WaitGroup
	for i := 0; i < *workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				j.answer <- answerScenario(j.line)
			}
		}()
	}

	writeErr := make(chan error, 1)
	go func() {
		out := bufio.NewWriter(stdout)
		encoder := json.NewEncoder(out)
		var err error
		for answer := range ordered {
			a := <-answer
			if err == nil {
				err = encoder.Encode(a)
			}
			// Answer as soon as the scenario in front is done: a caller may be waiting for it.
			if err == nil && len(ordered) == 0 {
				err = out.Flush()
			}
		}
		if err == nil {
			err = out.Flush()
		}
		writeErr <- err
	}()

	scanner := bufio.NewScanner(stdin)
	scanner.Buffer(make([]byte, 1024*1024), 256*1024*1024)
	for scanner.Scan() {
		line := append([]byte(nil), scanner.Bytes()...)
		if len(line) == 0 {
			continue
		}
		answer := make(chan batchAnswer, 1)
		ordered <- answer
		jobs <- job{line: line, answer: answer}
	}
	close(jobs)
	wg.Wait()
	close(ordered)
	if err := <-writeErr; err != nil {
		return err
	}
	return scanner.Err()
}

func answerScenario(line []byte) batchAnswer {
	var scenario batchScenario
	if err := json.Unmarshal(line, &scenario); err != nil {
		return batchAnswer{Error: fmt.Sprintf("decoding scenario: %v", err)}
	}
	answer := batchAnswer{ID: scenario.ID}
	rep, err := evaluateScenario(scenario)
	if err != nil {
		answer.Error = err.Error()
	} else {
		answer.Report = rep
	}
	return answer
}

func evaluateScenario(scenario batchScenario) (*report, error) {
	t, err := makeTarget(scenario.Pod, scenario.Claim)
	if err != nil {
		return nil, err
	}
	gates, err := gatesFor(scenario.KubernetesVersion, scenario.FeatureGates)
	if err != nil {
		return nil, err
	}
	snap, err := loadSnapshot(scenario.Objects)
	if err != nil {
		return nil, err
	}
	return evaluate(context.Background(), snap, t, gates, scenario.Node)
}
