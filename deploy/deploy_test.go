package deploy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/batch"
	batchtypes "github.com/aws/aws-sdk-go-v2/service/batch/types"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/manejo/manejo/pipeline"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// read returns a file of this folder.
func read(t *testing.T, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.FromSlash(rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// strictJSON decodes b into v refusing unknown fields and trailing data.
func strictJSON(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return fmt.Errorf("trailing data after the object")
	}
	return nil
}

// runFlags are the flags `manejo run` defines, as its -h lists them: the
// command is built and asked, so flags declared in shared groups
// (cmd/manejo/flaggroups.go) count as well as those of cmd_run.go.
func runFlags(t *testing.T) map[string]bool {
	t.Helper()
	runFlagsOnce.Do(func() { runFlagSet, runFlagsErr = listRunFlags() })
	if runFlagsErr != nil {
		t.Fatalf("could not read the flags of manejo run: %v", runFlagsErr)
	}
	return runFlagSet
}

var (
	runFlagsOnce sync.Once
	runFlagSet   map[string]bool
	runFlagsErr  error
)

// listRunFlags builds manejo into a temporary folder and reads the flag
// names of `manejo run -h`.
func listRunFlags() (map[string]bool, error) {
	dir, err := os.MkdirTemp("", "deploy-manejo-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "manejo")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/manejo").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build: %v: %s", err, out)
	}
	out, _ := exec.Command(bin, "run", "-h").CombinedOutput() // -h exits 0 or 2 by flag package convention
	flags := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^  -([a-z0-9-]+)`).FindAllSubmatch(out, -1) {
		flags[string(m[1])] = true
	}
	if !flags["out"] || !flags["shards"] || !flags["as-of"] || !flags["fields"] {
		return nil, fmt.Errorf("manejo run -h lists %v", slices.Sorted(maps.Keys(flags)))
	}
	return flags, nil
}

// checkArgs checks a `manejo run` command line: every flag is one manejo
// defines, and returns the flags' values.
func checkArgs(t *testing.T, what string, args []string, flags map[string]bool) map[string]string {
	t.Helper()
	if len(args) == 0 || args[0] != "run" {
		t.Fatalf("%s: args %v, want `run ...`", what, args)
	}
	vals := map[string]string{}
	for i := 1; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "--") {
			t.Errorf("%s: argument %q is not a flag", what, a)
			continue
		}
		name, v, ok := strings.Cut(a[2:], "=")
		if !ok && i+1 < len(args) {
			i++
			v = args[i]
		}
		if !flags[name] {
			t.Errorf("%s: --%s is not a flag of manejo run", what, name)
		}
		vals[name] = v
	}
	return vals
}

// exitCodes are manejo run's exit codes (cmd/manejo/main.go, README "Exit
// codes") and whether an engine should run the shard again after each.
var exitCodes = []struct {
	code  int32
	means string
	retry bool
}{
	{1, "the run could not finish", true},
	{2, "usage or configuration error", false},
	{3, "finished, some talhões failed", false},
	{4, "finished, some talhões incomplete: a transient fault outlasted the retry budget", true},
}

// podFailureAction is what a Job's podFailurePolicy does with a pod whose
// container exited with code, as the Job controller decides it: the first
// rule whose onExitCodes match (operator In or NotIn, for the named
// container or any) gives the action; without one, the failure counts
// against the retries (Count).
func podFailureAction(p *batchv1.PodFailurePolicy, container string, code int32) batchv1.PodFailurePolicyAction {
	if p == nil {
		return batchv1.PodFailurePolicyActionCount
	}
	for _, r := range p.Rules {
		x := r.OnExitCodes
		if x == nil || x.ContainerName != nil && *x.ContainerName != container {
			continue
		}
		in := slices.Contains(x.Values, code)
		if in == (x.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn) {
			return r.Action
		}
	}
	return batchv1.PodFailurePolicyActionCount
}

// batchRetries reports whether AWS Batch retries a job attempt whose
// container exited with code (status reason "Essential container in task
// exited"): the first evaluateOnExit entry whose conditions all match
// gives the action; when none does, the job is retried.
func batchRetries(rs *batchtypes.RetryStrategy, code int32) bool {
	glob := func(pattern *string, s string) bool {
		if pattern == nil {
			return true
		}
		if p, ok := strings.CutSuffix(*pattern, "*"); ok {
			return strings.HasPrefix(s, p)
		}
		return *pattern == s
	}
	for _, e := range rs.EvaluateOnExit {
		if glob(e.OnExitCode, fmt.Sprint(code)) && glob(e.OnReason, "") && glob(e.OnStatusReason, "Essential container in task exited") {
			return strings.EqualFold(string(e.Action), string(batchtypes.RetryActionRetry))
		}
	}
	return true
}

// checkIndexedJob checks the spec of the Indexed Job that runs manejo:
// one shard per index, a retry per index, exit 4 (talhões incomplete) and
// 1 retried and 2 and 3 not, the container named manejo, and returns its
// args' flag values.
func checkIndexedJob(t *testing.T, what string, spec batchv1.JobSpec, flags map[string]bool) map[string]string {
	t.Helper()
	if spec.CompletionMode == nil || *spec.CompletionMode != batchv1.IndexedCompletion {
		t.Errorf("%s: completionMode %v, want Indexed", what, spec.CompletionMode)
	}
	if spec.BackoffLimitPerIndex == nil || *spec.BackoffLimitPerIndex < 1 {
		t.Errorf("%s: backoffLimitPerIndex %v, want retries per index", what, spec.BackoffLimitPerIndex)
	}
	for _, e := range exitCodes {
		if got := podFailureAction(spec.PodFailurePolicy, "manejo", e.code); (got == batchv1.PodFailurePolicyActionCount) != e.retry {
			t.Errorf("%s: exit %d (%s) → podFailurePolicy %s; want the index retried: %v", what, e.code, e.means, got, e.retry)
		}
	}
	pod := spec.Template.Spec
	if pod.RestartPolicy != corev1.RestartPolicyNever || len(pod.Containers) != 1 || pod.Containers[0].Name != "manejo" {
		t.Fatalf("%s: restartPolicy %q, containers %d; want Never and one container named manejo", what, pod.RestartPolicy, len(pod.Containers))
	}
	c := pod.Containers[0]
	// The read pass's spill lives in the container's layer: ≈ 16 GB for a
	// shard of 10,000 talhões (docs/deploy.md), so the pod asks for it.
	req, lim := c.Resources.Requests[corev1.ResourceEphemeralStorage], c.Resources.Limits[corev1.ResourceEphemeralStorage]
	if req.Value() < 16e9 || lim.Value() < req.Value() {
		t.Errorf("%s: ephemeral-storage request %s, limit %s; want a request of at least the spill of a 10,000-talhão shard (16 GB) and a limit no lower", what, req.String(), lim.String())
	}
	vals := checkArgs(t, what, c.Args, flags)
	shards := fmt.Sprint(deref(spec.Completions))
	if vals["shards"] != shards || fmt.Sprint(deref(spec.Parallelism)) != shards {
		t.Errorf("%s: completions %s, parallelism %d, --shards %q; want all equal", what, shards, deref(spec.Parallelism), vals["shards"])
	}
	if len(c.EnvFrom) == 0 || c.EnvFrom[0].SecretRef == nil {
		t.Errorf("%s: credentials should come from a secret (envFrom.secretRef)", what)
	}
	if sc := c.SecurityContext; sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Errorf("%s: the container must not allow privilege escalation", what)
	}
	return vals
}

func deref(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}

// TestKubernetesIndexedJob decodes deploy/kubernetes/indexed-job.yaml with
// Kubernetes' own batch/v1 types, unknown fields refused.
func TestKubernetesIndexedJob(t *testing.T) {
	var job batchv1.Job
	if err := yaml.UnmarshalStrict(read(t, "kubernetes/indexed-job.yaml"), &job); err != nil {
		t.Fatalf("indexed-job.yaml is not a strict batch/v1 Job: %v", err)
	}
	if job.APIVersion != "batch/v1" || job.Kind != "Job" {
		t.Errorf("apiVersion %q kind %q, want batch/v1 Job", job.APIVersion, job.Kind)
	}
	vals := checkIndexedJob(t, "indexed-job.yaml", job.Spec, runFlags(t))
	if _, err := pipeline.ParseAsOf(vals["as-of"], time.Now()); err != nil {
		t.Errorf("indexed-job.yaml: --as-of %v", err)
	}
}

// TestKubernetesWeeklyCronJob decodes deploy/kubernetes/weekly-cronjob.yaml
// strictly as a batch/v1 CronJob: a weekly cron schedule in a valid time
// zone, never two runs at once, the Indexed Job of indexed-job.yaml run
// with the observation cache and an --as-of computed when it starts.
func TestKubernetesWeeklyCronJob(t *testing.T) {
	var cj batchv1.CronJob
	if err := yaml.UnmarshalStrict(read(t, "kubernetes/weekly-cronjob.yaml"), &cj); err != nil {
		t.Fatalf("weekly-cronjob.yaml is not a strict batch/v1 CronJob: %v", err)
	}
	if cj.APIVersion != "batch/v1" || cj.Kind != "CronJob" {
		t.Errorf("apiVersion %q kind %q, want batch/v1 CronJob", cj.APIVersion, cj.Kind)
	}
	f := strings.Fields(cj.Spec.Schedule)
	if len(f) != 5 || f[2] != "*" || f[3] != "*" || !regexp.MustCompile(`^[0-6]$`).MatchString(f[4]) {
		t.Errorf("schedule %q, want weekly: minute hour * * day-of-week", cj.Spec.Schedule)
	}
	if cj.Spec.TimeZone == nil {
		t.Error("no timeZone: the schedule would follow the controller's clock")
	} else if _, err := time.LoadLocation(*cj.Spec.TimeZone); err != nil {
		t.Errorf("timeZone: %v", err)
	}
	if cj.Spec.ConcurrencyPolicy != batchv1.ForbidConcurrent {
		t.Errorf("concurrencyPolicy %q, want Forbid", cj.Spec.ConcurrencyPolicy)
	}
	vals := checkIndexedJob(t, "weekly-cronjob.yaml", cj.Spec.JobTemplate.Spec, runFlags(t))
	if vals["cache"] == "" {
		t.Error("weekly-cronjob.yaml: the weekly run needs --cache")
	}
	monday := time.Date(2026, 9, 7, 9, 0, 0, 0, time.UTC)
	if got, err := pipeline.ParseAsOf(vals["as-of"], monday); err != nil || !got.Equal(time.Date(2026, 9, 7, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("weekly-cronjob.yaml: --as-of %q on %s gives %s, %v; want that day, computed when the run starts", vals["as-of"], monday, got, err)
	}
}

// TestAWSBatchJobDefinition decodes deploy/aws-batch/job-definition.json
// strictly as the SDK's RegisterJobDefinitionInput (what `aws batch
// register-job-definition --cli-input-json` takes): unknown fields refused.
func TestAWSBatchJobDefinition(t *testing.T) {
	var jd batch.RegisterJobDefinitionInput
	if err := strictJSON(read(t, "aws-batch/job-definition.json"), &jd); err != nil {
		t.Fatalf("job-definition.json is not a strict RegisterJobDefinitionInput: %v", err)
	}
	if jd.Type != "container" || jd.ContainerProperties == nil || jd.RetryStrategy == nil || deref(jd.RetryStrategy.Attempts) < 2 {
		t.Fatalf("job definition: type %q, retry strategy %+v; want a container job retried", jd.Type, jd.RetryStrategy)
	}
	cmd := slices.Clone(jd.ContainerProperties.Command)
	for i, a := range cmd {
		if name, ok := strings.CutPrefix(a, "Ref::"); ok {
			v, ok := jd.Parameters[name]
			if !ok {
				t.Errorf("command uses Ref::%s without a default parameter", name)
			}
			cmd[i] = v
		}
	}
	vals := checkArgs(t, "job-definition.json", cmd, runFlags(t))
	if vals["shards"] == "" || vals["cache"] == "" {
		t.Errorf("job definition: --shards %q, --cache %q; want both", vals["shards"], vals["cache"])
	}
	for _, e := range exitCodes {
		if got := batchRetries(jd.RetryStrategy, e.code); got != e.retry {
			t.Errorf("evaluateOnExit: exit %d (%s) retried: %v, want %v", e.code, e.means, got, e.retry)
		}
	}
	if len(jd.ContainerProperties.ResourceRequirements) != 2 {
		t.Errorf("resource requirements %v, want VCPU and MEMORY", jd.ContainerProperties.ResourceRequirements)
	}
}

// TestAWSSchedules resolves the CloudFormation template's parameters and
// decodes each AWS::Scheduler::Schedule strictly as the SDK's
// CreateScheduleInput, and its target's input, as EventBridge Scheduler
// sends it on a Monday, strictly as batch.SubmitJobInput: the pre-season
// run once with a fixed as-of, the weekly run every Monday with the cache
// and the scheduled day as --as-of.
func TestAWSSchedules(t *testing.T) {
	var cfn struct {
		AWSTemplateFormatVersion, Description string
		Parameters                            map[string]struct {
			Type, Description  string
			Default            any
			MinValue, MaxValue float64
		}
		Resources map[string]struct {
			Type       string
			Properties any
		}
		Outputs map[string]any
	}
	if err := strictJSON(read(t, "aws-batch/preseason-schedule.cfn.json"), &cfn); err != nil {
		t.Fatal(err)
	}
	params := map[string]string{"JobQueueArn": "arn:aws:batch:sa-east-1:123456789012:job-queue/manejo-spot",
		"JobDefinitionArn": "arn:aws:batch:sa-east-1:123456789012:job-definition/manejo-run:1"}
	for name, p := range cfn.Parameters {
		if p.Default != nil {
			params[name] = fmt.Sprint(p.Default)
		}
	}
	const scheduled = "2026-09-07T09:00:00Z" // a Monday, 06:00 in São Paulo
	schedules := map[string]*batch.SubmitJobInput{}
	for name, r := range cfn.Resources {
		if r.Type != "AWS::Scheduler::Schedule" {
			continue
		}
		props, err := json.Marshal(resolve(t, r.Properties, params))
		if err != nil {
			t.Fatal(err)
		}
		var in scheduler.CreateScheduleInput
		if err := strictJSON(props, &in); err != nil {
			t.Fatalf("%s is not a strict CreateScheduleInput: %v\n%s", name, err, props)
		}
		if in.Target == nil || *in.Target.Arn != "arn:aws:scheduler:::aws-sdk:batch:submitJob" || in.Target.Input == nil {
			t.Fatalf("%s: target %+v, want the Batch SubmitJob universal target", name, in.Target)
		}
		if _, err := time.LoadLocation(*in.ScheduleExpressionTimezone); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		var submit batch.SubmitJobInput
		input := strings.ReplaceAll(*in.Target.Input, "<aws.scheduler.scheduled-time>", scheduled)
		if err := strictJSON([]byte(input), &submit); err != nil {
			t.Fatalf("%s: the target input is not a strict SubmitJobInput: %v\n%s", name, err, input)
		}
		if submit.ArrayProperties == nil || fmt.Sprint(deref(submit.ArrayProperties.Size)) != submit.Parameters["shards"] {
			t.Errorf("%s: array size and shards differ: %+v, %q", name, submit.ArrayProperties, submit.Parameters["shards"])
		}
		for _, e := range exitCodes {
			if submit.RetryStrategy != nil && batchRetries(submit.RetryStrategy, e.code) != e.retry {
				t.Errorf("%s: its retryStrategy retries exit %d (%s): %v, want %v", name, e.code, e.means, !e.retry, e.retry)
			}
		}
		schedules[*in.ScheduleExpression] = &submit
	}
	once, weekly := false, false
	for expr, submit := range schedules {
		asOf, err := pipeline.ParseAsOf(submit.Parameters["asof"], time.Now())
		switch {
		case strings.HasPrefix(expr, "at("):
			once = err == nil
		case expr == "cron(0 6 ? * MON *)":
			weekly = true
			if err != nil || asOf.Format(time.DateOnly) != scheduled[:10] || submit.Parameters["cache"] == "" {
				t.Errorf("weekly run: asof %q → %s, %v; cache %q; want the scheduled day and the cache", submit.Parameters["asof"], asOf, err, submit.Parameters["cache"])
			}
		}
	}
	if !once || !weekly {
		t.Errorf("schedules %v: want the pre-season run once (at(...)) and the weekly run (cron(0 6 ? * MON *))", slices.Collect(maps.Keys(schedules)))
	}
}

// resolve replaces CloudFormation's Ref, Fn::Sub and Fn::GetAtt in v with
// the parameters' values (a resource's Arn attribute becomes an example
// ARN).
func resolve(t *testing.T, v any, params map[string]string) any {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 1 {
			for k, a := range x {
				switch k {
				case "Ref":
					p, ok := params[a.(string)]
					if !ok {
						t.Errorf("Ref %v: no such parameter", a)
					}
					return p
				case "Fn::GetAtt":
					return "arn:aws:iam::123456789012:role/" + fmt.Sprint(a.([]any)[0])
				case "Fn::Sub":
					return regexp.MustCompile(`\$\{(\w+)\}`).ReplaceAllStringFunc(a.(string), func(m string) string {
						p, ok := params[m[2:len(m)-1]]
						if !ok {
							t.Errorf("Fn::Sub uses %s, not a parameter", m)
						}
						return p
					})
				}
			}
		}
		out := map[string]any{}
		for k, a := range x {
			out[k] = resolve(t, a, params)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, a := range x {
			out[i] = resolve(t, a, params)
		}
		return out
	}
	return v
}

// TestExchangeJobs checks the two-phase plan of the block exchange: the
// Kubernetes read and finish Indexed Jobs decode strictly as batch/v1
// Jobs, the AWS Batch submissions strictly as the SDK's SubmitJobInput;
// each pair runs the same command on the same shards but for --phase
// read, then finish (with --exchange-wait), and the finish array job
// depends on the whole read array job (a dependency without a type, not
// N_TO_N: a finish shard needs every shard's read phase).
func TestExchangeJobs(t *testing.T) {
	flags := runFlags(t)
	var k8s []map[string]string
	for _, name := range []string{"exchange-read-job.yaml", "exchange-finish-job.yaml"} {
		var job batchv1.Job
		if err := yaml.UnmarshalStrict(read(t, "kubernetes/"+name), &job); err != nil {
			t.Fatalf("%s is not a strict batch/v1 Job: %v", name, err)
		}
		k8s = append(k8s, checkIndexedJob(t, name, job.Spec, flags))
	}
	checkPhases(t, "kubernetes", k8s)

	var raw []json.RawMessage
	if err := json.Unmarshal(read(t, "aws-batch/exchange-jobs.json"), &raw); err != nil || len(raw) != 2 {
		t.Fatalf("exchange-jobs.json: %d submissions, %v; want two", len(raw), err)
	}
	var aws []map[string]string
	for i, r := range raw {
		var in batch.SubmitJobInput
		if err := strictJSON(r, &in); err != nil {
			t.Fatalf("exchange-jobs.json[%d] is not a strict SubmitJobInput: %v", i, err)
		}
		if in.ContainerOverrides == nil || in.ArrayProperties == nil {
			t.Fatalf("exchange-jobs.json[%d]: want an array job with its command", i)
		}
		vals := checkArgs(t, fmt.Sprintf("exchange-jobs.json[%d]", i), in.ContainerOverrides.Command, flags)
		if fmt.Sprint(deref(in.ArrayProperties.Size)) != vals["shards"] {
			t.Errorf("exchange-jobs.json[%d]: array size %d, --shards %q; want equal", i, deref(in.ArrayProperties.Size), vals["shards"])
		}
		deps := len(in.DependsOn)
		if i == 0 && deps != 0 || i == 1 && (deps != 1 || in.DependsOn[0].Type != "") {
			t.Errorf("exchange-jobs.json[%d]: dependsOn %+v; want none for the read phase, one without a type for the finish", i, in.DependsOn)
		}
		aws = append(aws, vals)
	}
	checkPhases(t, "aws-batch", aws)
}

// checkPhases checks a read and a finish command line: --phase read, then
// finish with --exchange-wait, every other flag the same.
func checkPhases(t *testing.T, what string, vals []map[string]string) {
	t.Helper()
	read, finish := maps.Clone(vals[0]), maps.Clone(vals[1])
	if read["phase"] != pipeline.PhaseRead || finish["phase"] != pipeline.PhaseFinish || finish["exchange-wait"] == "" {
		t.Errorf("%s: --phase %q then %q, --exchange-wait %q; want read, then finish with a wait", what, read["phase"], finish["phase"], finish["exchange-wait"])
	}
	if _, err := time.ParseDuration(finish["exchange-wait"]); err != nil {
		t.Errorf("%s: --exchange-wait: %v", what, err)
	}
	for _, m := range []map[string]string{read, finish} {
		delete(m, "phase")
		delete(m, "exchange-wait")
	}
	if !maps.Equal(read, finish) {
		t.Errorf("%s: the phases' other flags differ: %v and %v", what, read, finish)
	}
}
