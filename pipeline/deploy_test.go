package pipeline

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDeployFiles checks that the deployment examples parse and agree with
// the worker: the AWS Batch job definition retries 3 times and passes
// --shards (the index comes from AWS_BATCH_JOB_ARRAY_INDEX), the schedule's
// SubmitJob input is valid JSON once substituted, and the Kubernetes Job is
// Indexed with completions = parallelism = --shards. (No YAML module is in
// go.mod, so the manifest is checked line by line.)
func TestDeployFiles(t *testing.T) {
	root := filepath.Join("..", "deploy")
	read := func(rel string) []byte {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}

	var jd struct {
		Type                string            `json:"type"`
		Parameters          map[string]string `json:"parameters"`
		ContainerProperties struct {
			Image                string
			Command              []string
			ResourceRequirements []struct{ Type, Value string }
			Environment          []struct{ Name, Value string }
		} `json:"containerProperties"`
		RetryStrategy struct {
			Attempts       int
			EvaluateOnExit []map[string]string
		} `json:"retryStrategy"`
	}
	if err := json.Unmarshal(read("aws-batch/job-definition.json"), &jd); err != nil {
		t.Fatalf("job-definition.json: %v", err)
	}
	cmd := strings.Join(jd.ContainerProperties.Command, " ")
	if jd.Type != "container" || jd.RetryStrategy.Attempts != 3 || !strings.HasPrefix(cmd, "run ") || !strings.Contains(cmd, "--shards Ref::shards") {
		t.Errorf("job definition: type %q, attempts %d, command %q; want a container running `run ... --shards Ref::shards` with 3 attempts", jd.Type, jd.RetryStrategy.Attempts, cmd)
	}
	for _, ref := range regexp.MustCompile(`Ref::(\w+)`).FindAllStringSubmatch(cmd, -1) {
		if _, ok := jd.Parameters[ref[1]]; !ok {
			t.Errorf("job definition: command uses Ref::%s without a default parameter", ref[1])
		}
	}
	if len(jd.ContainerProperties.ResourceRequirements) != 2 {
		t.Errorf("job definition: resource requirements %v, want VCPU and MEMORY", jd.ContainerProperties.ResourceRequirements)
	}

	var cfn struct {
		Parameters map[string]struct{ Default any }
		Resources  map[string]struct {
			Type       string
			Properties json.RawMessage
		}
	}
	if err := json.Unmarshal(read("aws-batch/preseason-schedule.cfn.json"), &cfn); err != nil {
		t.Fatalf("preseason-schedule.cfn.json: %v", err)
	}
	sched, ok := cfn.Resources["PreSeasonRun"]
	if !ok || sched.Type != "AWS::Scheduler::Schedule" {
		t.Fatalf("schedule resource = %+v, want AWS::Scheduler::Schedule", sched)
	}
	var props struct {
		ScheduleExpression map[string]string
		Target             struct {
			Arn   string
			Input map[string]string
		}
	}
	if err := json.Unmarshal(sched.Properties, &props); err != nil {
		t.Fatal(err)
	}
	if props.Target.Arn != "arn:aws:scheduler:::aws-sdk:batch:submitJob" {
		t.Errorf("schedule target %q, want the Batch SubmitJob universal target", props.Target.Arn)
	}
	input := regexp.MustCompile(`\$\{(\w+)\}`).ReplaceAllStringFunc(props.Target.Input["Fn::Sub"], func(m string) string {
		name := m[2 : len(m)-1]
		if name == "Shards" {
			return "16"
		}
		if _, ok := cfn.Parameters[name]; !ok {
			t.Errorf("schedule input uses ${%s}, not a template parameter", name)
		}
		return "x"
	})
	var submit struct {
		JobQueue, JobDefinition string
		ArrayProperties         struct{ Size int }
		Parameters              map[string]string
	}
	if err := json.Unmarshal([]byte(input), &submit); err != nil {
		t.Fatalf("schedule input is not JSON once substituted: %v\n%s", err, input)
	}
	if submit.ArrayProperties.Size != 16 || submit.Parameters["shards"] != "16" {
		t.Errorf("schedule submits size %d with shards %q; want both = Shards", submit.ArrayProperties.Size, submit.Parameters["shards"])
	}

	k8s := string(read("kubernetes/indexed-job.yaml"))
	field := func(name string) string {
		m := regexp.MustCompile(`(?m)^\s*` + name + `:\s*(\S+)\s*$`).FindStringSubmatch(k8s)
		if m == nil {
			t.Errorf("indexed-job.yaml: no %s", name)
			return ""
		}
		return m[1]
	}
	shards := regexp.MustCompile(`--shards=(\d+)`).FindStringSubmatch(k8s)
	if field("kind") != "Job" || field("completionMode") != "Indexed" || shards == nil ||
		field("completions") != shards[1] || field("parallelism") != shards[1] || field("backoffLimitPerIndex") == "" {
		t.Errorf("indexed-job.yaml: want an Indexed Job with completions = parallelism = --shards and backoffLimitPerIndex")
	}
	if strings.Contains(k8s, "\t") {
		t.Error("indexed-job.yaml: tabs are not allowed in YAML indentation")
	}
	if !strings.Contains(k8s, "secretRef:") {
		t.Error("indexed-job.yaml: credentials should come from a secret (envFrom.secretRef)")
	}
}
