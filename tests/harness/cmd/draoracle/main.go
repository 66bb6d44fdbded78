// Command draoracle runs the upstream structured allocator (k8s.io/dynamic-resource-allocation)
// on a snapshot of API objects, the way kube-scheduler's DynamicResources plugin calls it, and
// prints the verdict and the chosen devices for every node as JSON. The tests use it as the
// reference the Python allocator is compared with.
//
//	draoracle [flags] FILE|-        one snapshot (multi-document YAML/JSON or a List)
//	draoracle batch [--workers N]   JSON lines on stdin, one scenario per line, one answer per line
//	draoracle gates [--feature-gates A=true]   the feature gates and allocator features in use
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/sets"
)

func main() {
	var err error
	switch {
	case len(os.Args) > 1 && os.Args[1] == "batch":
		err = runBatch(os.Args[2:], os.Stdin, os.Stdout)
	case len(os.Args) > 1 && os.Args[1] == "gates":
		err = runGates(os.Args[2:], os.Stdout)
	default:
		err = runSingle(os.Args[1:], os.Stdout, os.Stderr)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "draoracle: %v\n", err)
		os.Exit(2)
	}
}

func runSingle(args []string, stdout, stderr io.Writer) error {
	flags := flag.NewFlagSet("draoracle", flag.ContinueOnError)
	flags.SetOutput(stderr)
	pod := flags.String("pod", "", "allocate the claims of this pod (namespace/name)")
	claim := flags.String("claim", "", "allocate this claim (namespace/name)")
	version := flags.String("kubernetes-version", builtForVersion, "scheduler version whose default feature gates apply")
	gatesText := flags.String("feature-gates", "", "feature gate overrides, A=true,B=false")
	node := flags.String("node", "", "only this node (default: every Node in the input, by name)")
	repeat := flags.Int("repeat", 1, "run everything N times and print the timing to stderr as JSON")
	flags.Usage = func() {
		fmt.Fprintf(stderr, "usage: draoracle [flags] FILE|-\n       draoracle batch [--workers N] < scenarios.jsonl\n")
		flags.PrintDefaults()
	}
	if err := flags.Parse(args); err != nil {
		return err
	}
	if flags.NArg() != 1 {
		flags.Usage()
		return fmt.Errorf("expected one input file, got %d", flags.NArg())
	}
	t, err := makeTarget(*pod, *claim)
	if err != nil {
		return err
	}
	overrides, err := parseFeatureGates(*gatesText)
	if err != nil {
		return err
	}
	gates, err := gatesFor(*version, overrides)
	if err != nil {
		return err
	}
	docs, err := readInput(flags.Arg(0))
	if err != nil {
		return err
	}
	if *repeat < 1 {
		return fmt.Errorf("--repeat must be at least 1")
	}

	var rep *report
	start := time.Now()
	for i := 0; i < *repeat; i++ {
		snap, err := loadSnapshot(docs)
		if err != nil {
			return err
		}
		if rep, err = evaluate(context.Background(), snap, t, gates, *node); err != nil {
			return err
		}
	}
	elapsed := time.Since(start)
	if *repeat > 1 {
		perNode := 0.0
		if len(rep.Nodes) > 0 {
			perNode = float64(elapsed.Microseconds()) / float64(*repeat*len(rep.Nodes))
		}
		timing, _ := json.Marshal(map[string]any{"seconds": elapsed.Seconds(), "repeat": *repeat, "nodes": len(rep.Nodes), "perNodeMicros": perNode})
		fmt.Fprintln(stderr, string(timing))
	}
	encoder := json.NewEncoder(stdout)
	encoder.SetIndent("", "  ")
	return encoder.Encode(rep)
}

// runGates prints the gates the oracle runs with and the allocator features they map to, so that
// tests can hold them against a real control plane's.
func runGates(args []string, stdout io.Writer) error {
	flags := flag.NewFlagSet("draoracle gates", flag.ContinueOnError)
	version := flags.String("kubernetes-version", builtForVersion, "scheduler version whose default feature gates apply")
	gatesText := flags.String("feature-gates", "", "feature gate overrides, A=true,B=false")
	if err := flags.Parse(args); err != nil {
		return err
	}
	overrides, err := parseFeatureGates(*gatesText)
	if err != nil {
		return err
	}
	gates, err := gatesFor(*version, overrides)
	if err != nil {
		return err
	}
	encoder := json.NewEncoder(stdout)
	encoder.SetIndent("", "  ")
	return encoder.Encode(map[string]any{"kubernetesVersion": builtForVersion, "gates": gates,
		"allocatorFeatures": sets.List(allocatorFeatures(gates).Set())})
}

func readInput(path string) ([]json.RawMessage, error) {
	var in io.Reader = os.Stdin
	if path != "-" {
		file, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer file.Close()
		in = file
	}
	docs, err := readDocuments(in)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return docs, nil
}

func makeTarget(pod, claim string) (target, error) {
	switch {
	case (pod == "") == (claim == ""):
		return target{}, fmt.Errorf("give exactly one of --pod or --claim")
	case pod != "":
		return target{Pod: withNamespace(pod)}, nil
	default:
		return target{Claim: withNamespace(claim)}, nil
	}
}

func withNamespace(name string) string {
	if strings.Contains(name, "/") {
		return name
	}
	return "default/" + name
}
