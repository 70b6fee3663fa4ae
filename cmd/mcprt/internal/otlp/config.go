// Package otlp exports mcprt's spans and the conventions' duration
// histograms over OTLP/HTTP with the JSON encoding (opentelemetry-proto's
// specification: lowerCamelCase names, ids as hex, enums as numbers,
// 64-bit integers as strings), with the standard library only. It is
// configured by the standard OTEL_* variables (ConfigFromEnv), batches,
// and holds at most a bounded queue: a collector that is down or slow
// never blocks or grows a call, spans past the queue are dropped and
// counted.
package otlp

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/mcprt/mcprt/handlers/trace"
)

// Config says where and how to export.
type Config struct {
	// TracesURL and MetricsURL are the full URLs posted to ("": that
	// signal is not exported).
	TracesURL, MetricsURL string
	// Headers go on every export request (OTEL_EXPORTER_OTLP_HEADERS:
	// often a collector's API key, so never logged).
	Headers map[string]string
	// Resource are the resource's attributes, service.name among them.
	Resource []trace.Attr
	// Sampler is OTEL_TRACES_SAMPLER's.
	Sampler trace.Sampler
	// Timeout bounds each export request, and the final flush on Close.
	Timeout time.Duration
	// MaxQueue bounds the spans waiting; BatchSize is the most sent in
	// one request; Delay is the longest a span waits for its batch.
	MaxQueue, BatchSize int
	Delay               time.Duration
	// MetricInterval is how often the histograms are exported.
	MetricInterval time.Duration
}

// Enabled reports whether anything is to be exported.
func (c Config) Enabled() bool { return c.TracesURL != "" || c.MetricsURL != "" }

// ConfigFromEnv reads the standard variables through getenv (os.Getenv),
// service the default service.name. With neither OTEL_EXPORTER_OTLP_ENDPOINT
// nor a signal's own endpoint set (or OTEL_SDK_DISABLED=true), nothing is
// exported: the Config is not Enabled. A malformed value is an error
// naming the variable, never its value's secrets.
func ConfigFromEnv(getenv func(string) string, service string) (Config, error) {
	c := Config{
		Timeout:        10 * time.Second,
		MaxQueue:       2048,
		BatchSize:      512,
		Delay:          5 * time.Second,
		MetricInterval: 60 * time.Second,
		Sampler:        trace.ParentBased(trace.AlwaysOn),
	}
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") {
		return c, nil
	}
	for _, v := range []string{"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL"} {
		if p := getenv(v); p != "" && p != "http/json" {
			return c, fmt.Errorf("%s=%s: mcprt exports OTLP over http/json only", v, p)
		}
	}
	base := strings.TrimRight(getenv("OTEL_EXPORTER_OTLP_ENDPOINT"), "/")
	var err error
	if c.TracesURL, err = signalURL(getenv, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", base, "/v1/traces"); err != nil {
		return c, err
	}
	if c.MetricsURL, err = signalURL(getenv, "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", base, "/v1/metrics"); err != nil {
		return c, err
	}
	if strings.EqualFold(getenv("OTEL_TRACES_EXPORTER"), "none") {
		c.TracesURL = ""
	}
	if strings.EqualFold(getenv("OTEL_METRICS_EXPORTER"), "none") {
		c.MetricsURL = ""
	}
	if c.Headers, err = keyValues(getenv("OTEL_EXPORTER_OTLP_HEADERS")); err != nil {
		return c, fmt.Errorf("OTEL_EXPORTER_OTLP_HEADERS: %w", err)
	}
	res, err := keyValues(getenv("OTEL_RESOURCE_ATTRIBUTES"))
	if err != nil {
		return c, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES: %w", err)
	}
	if s := getenv("OTEL_SERVICE_NAME"); s != "" {
		res["service.name"] = s
	} else if res["service.name"] == "" {
		res["service.name"] = service
	}
	for _, k := range sortedKeys(res) {
		c.Resource = append(c.Resource, trace.String(k, res[k]))
	}
	if c.Sampler, err = samplerFromEnv(getenv("OTEL_TRACES_SAMPLER"), getenv("OTEL_TRACES_SAMPLER_ARG")); err != nil {
		return c, err
	}
	for _, d := range []struct {
		name string
		to   *time.Duration
	}{{"OTEL_EXPORTER_OTLP_TIMEOUT", &c.Timeout}, {"OTEL_BSP_SCHEDULE_DELAY", &c.Delay}, {"OTEL_METRIC_EXPORT_INTERVAL", &c.MetricInterval}} {
		if v := getenv(d.name); v != "" {
			ms, err := strconv.Atoi(v)
			if err != nil || ms <= 0 {
				return c, fmt.Errorf("%s=%q: want milliseconds, a positive integer", d.name, v)
			}
			*d.to = time.Duration(ms) * time.Millisecond
		}
	}
	for _, n := range []struct {
		name string
		to   *int
	}{{"OTEL_BSP_MAX_QUEUE_SIZE", &c.MaxQueue}, {"OTEL_BSP_MAX_EXPORT_BATCH_SIZE", &c.BatchSize}} {
		if v := getenv(n.name); v != "" {
			i, err := strconv.Atoi(v)
			if err != nil || i <= 0 {
				return c, fmt.Errorf("%s=%q: want a positive integer", n.name, v)
			}
			*n.to = i
		}
	}
	c.BatchSize = min(c.BatchSize, c.MaxQueue)
	return c, nil
}

// signalURL is a signal's own endpoint, used as it is, or the base with
// the signal's path.
func signalURL(getenv func(string) string, own, base, path string) (string, error) {
	u := getenv(own)
	if u == "" && base != "" {
		u = base + path
	}
	if u == "" {
		return "", nil
	}
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		name := own
		if getenv(own) == "" {
			name = "OTEL_EXPORTER_OTLP_ENDPOINT"
		}
		return "", fmt.Errorf("%s: want an http:// or https:// URL", name)
	}
	return u, nil
}

// keyValues reads the W3C-baggage-like list the OTEL_* variables use:
// key=value pairs, comma-separated, values percent-decoded.
func keyValues(s string) (map[string]string, error) {
	m := map[string]string{}
	for part := range strings.SplitSeq(s, ",") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, errors.New("want key=value pairs separated by commas")
		}
		dv, err := url.PathUnescape(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("the value of %q is not percent-encoded right", k)
		}
		m[k] = dv
	}
	return m, nil
}

func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	for i := 1; i < len(ks); i++ {
		for j := i; j > 0 && ks[j] < ks[j-1]; j-- {
			ks[j], ks[j-1] = ks[j-1], ks[j]
		}
	}
	return ks
}

// samplerFromEnv is OTEL_TRACES_SAMPLER's sampler (default
// parentbased_always_on); ratios default to 1.
func samplerFromEnv(name, arg string) (trace.Sampler, error) {
	ratio := func() (float64, error) {
		if arg == "" {
			return 1, nil
		}
		r, err := strconv.ParseFloat(arg, 64)
		if err != nil || r < 0 || r > 1 {
			return 0, fmt.Errorf("OTEL_TRACES_SAMPLER_ARG=%q: want a ratio from 0 to 1", arg)
		}
		return r, nil
	}
	switch name {
	case "", "parentbased_always_on":
		return trace.ParentBased(trace.AlwaysOn), nil
	case "always_on":
		return trace.AlwaysOn, nil
	case "always_off":
		return trace.AlwaysOff, nil
	case "parentbased_always_off":
		return trace.ParentBased(trace.AlwaysOff), nil
	case "traceidratio", "parentbased_traceidratio":
		r, err := ratio()
		if err != nil {
			return nil, err
		}
		if name == "traceidratio" {
			return trace.Ratio(r), nil
		}
		return trace.ParentBased(trace.Ratio(r)), nil
	}
	return nil, fmt.Errorf("OTEL_TRACES_SAMPLER=%q: want always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off or parentbased_traceidratio", name)
}
