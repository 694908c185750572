package kafka

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// ErrURL is matched by the errors of a kafka:// URL that cannot be used.
var ErrURL = errors.New("kafka: bad URL")

// ErrAuth is matched by the errors of the SASL and TLS settings taken from
// the environment.
var ErrAuth = errors.New("kafka: bad SASL or TLS settings")

// Scheme is the scheme of the URLs of this package.
const Scheme = "kafka://"

// IsURL reports whether s is a kafka:// URL.
func IsURL(s string) bool { return strings.HasPrefix(strings.ToLower(s), Scheme) }

// Format is the encoding of the messages' values.
type Format uint8

const (
	// JSON: each message is one JSON object, one row.
	JSON Format = iota
	// Arrow: each message is one Arrow IPC stream (a schema and record
	// batches), its rows in order.
	Arrow
)

func (f Format) String() string {
	if f == Arrow {
		return "arrow"
	}
	return "json"
}

// Start says where a group without a committed offset for a partition starts
// reading it.
type Start uint8

const (
	// Earliest: the oldest message the broker keeps.
	Earliest Start = iota
	// Latest: only messages produced after the group joins.
	Latest
)

// Source is what a kafka:// URL names:
//
//	kafka://HOST:PORT[,HOST:PORT...]/TOPIC?group=G&format=json|arrow[&start=earliest|latest][&client_id=ID][&instance_id=ID][&idle=DURATION]
//
// group is required; format defaults to json, start to earliest (where a
// group with no committed offset for a partition begins), client_id to
// "dime". instance_id makes the member static (KIP-345): a member restarted
// with the same id takes its partitions back at once, where a new member
// waits for the group to drop the old one (its session timeout, 45 s), and
// a static member that stops does not leave the group. idle, if given, ends
// the input when no message has arrived for that long once the member has
// partitions (by default a stream never ends). Credentials never go in the
// URL: SASL and TLS come from the environment (see Auth).
type Source struct {
	Brokers  []string
	Topic    string
	Group    string
	Format   Format
	Start    Start
	ClientID string
	// InstanceID, if not empty, makes the member static.
	InstanceID string
	Idle       time.Duration
}

// String returns the URL of the source, in the canonical order of its
// parameters.
func (s Source) String() string {
	q := fmt.Sprintf("group=%s&format=%s", url.QueryEscape(s.Group), s.Format)
	return Scheme + strings.Join(s.Brokers, ",") + "/" + s.Topic + "?" + q
}

// Name names the source in messages: the brokers and the topic.
func (s Source) Name() string {
	return Scheme + strings.Join(s.Brokers, ",") + "/" + s.Topic
}

// ParseURL parses a kafka:// URL. Its errors match ErrURL.
func ParseURL(raw string) (Source, error) {
	bad := func(format string, args ...any) (Source, error) {
		return Source{}, fmt.Errorf("%w: %s", ErrURL, fmt.Sprintf(format, args...))
	}
	if !IsURL(raw) {
		return bad("%q does not start with kafka://", raw)
	}
	rest := raw[len(Scheme):]
	var query string
	if i := strings.IndexByte(rest, '?'); i >= 0 {
		rest, query = rest[:i], rest[i+1:]
	}
	hosts, topic, ok := strings.Cut(rest, "/")
	if !ok || topic == "" {
		return bad("%s: want kafka://HOST:PORT/TOPIC?group=G&format=json|arrow", raw)
	}
	if strings.Contains(hosts, "@") {
		return bad("credentials do not go in the URL: set DIME_KAFKA_SASL_USERNAME and DIME_KAFKA_SASL_PASSWORD")
	}
	topic, err := url.PathUnescape(topic)
	if err != nil || !validTopic(topic) {
		return bad("topic %q: want 1 to 249 of a-z A-Z 0-9 . _ -", topic)
	}
	s := Source{Topic: topic, ClientID: "dime"}
	for _, h := range strings.Split(hosts, ",") {
		host, port, err := net.SplitHostPort(h)
		if err != nil || host == "" {
			return bad("broker %q: want HOST:PORT", h)
		}
		if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
			return bad("broker %q: port %q is not a number from 1 to 65535", h, port)
		}
		s.Brokers = append(s.Brokers, h)
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return bad("query %q: %v", query, err)
	}
	for key, vals := range q {
		if len(vals) != 1 {
			return bad("parameter %q given %d times", key, len(vals))
		}
		v := vals[0]
		switch key {
		case "group":
			s.Group = v
		case "format":
			switch v {
			case "json":
				s.Format = JSON
			case "arrow":
				s.Format = Arrow
			default:
				return bad("format=%q: want json or arrow", v)
			}
		case "start":
			switch v {
			case "earliest":
				s.Start = Earliest
			case "latest":
				s.Start = Latest
			default:
				return bad("start=%q: want earliest or latest", v)
			}
		case "client_id":
			if v == "" {
				return bad("client_id is empty")
			}
			s.ClientID = v
		case "instance_id":
			if v == "" {
				return bad("instance_id is empty")
			}
			s.InstanceID = v
		case "idle":
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return bad("idle=%q: want a positive duration, e.g. 30s", v)
			}
			s.Idle = d
		default:
			return bad("unknown parameter %q (known: group, format, start, client_id, instance_id, idle)", key)
		}
	}
	if s.Group == "" {
		return bad("%s: a consumer group is required: add ?group=NAME", s.Name())
	}
	return s, nil
}

// validTopic reports whether t is a legal Kafka topic name.
func validTopic(t string) bool {
	if t == "" || len(t) > 249 || t == "." || t == ".." {
		return false
	}
	for _, r := range t {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// Environment variables of the SASL and TLS settings.
const (
	EnvSASLMechanism = "DIME_KAFKA_SASL_MECHANISM" // PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512
	EnvSASLUsername  = "DIME_KAFKA_SASL_USERNAME"
	EnvSASLPassword  = "DIME_KAFKA_SASL_PASSWORD"
	EnvTLS           = "DIME_KAFKA_TLS"             // 1 or true: TLS with the system's roots
	EnvTLSCA         = "DIME_KAFKA_TLS_CA"          // a PEM file of roots (implies TLS)
	EnvTLSCert       = "DIME_KAFKA_TLS_CERT"        // a client certificate, PEM (with EnvTLSKey)
	EnvTLSKey        = "DIME_KAFKA_TLS_KEY"         // its key, PEM
	EnvTLSServerName = "DIME_KAFKA_TLS_SERVER_NAME" // the name to verify, if not the broker's host
)

// Auth returns the client options of the SASL and TLS settings that getenv
// (os.Getenv if nil) gives. A password never appears in an error.
func Auth(getenv func(string) string) ([]kgo.Opt, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	var opts []kgo.Opt
	mech := strings.ToUpper(strings.TrimSpace(getenv(EnvSASLMechanism)))
	user, pass := getenv(EnvSASLUsername), getenv(EnvSASLPassword)
	if mech == "" && (user != "" || pass != "") {
		mech = "PLAIN"
	}
	if mech != "" {
		if user == "" || pass == "" {
			return nil, fmt.Errorf("%w: %s=%s needs %s and %s", ErrAuth, EnvSASLMechanism, mech, EnvSASLUsername, EnvSASLPassword)
		}
		var m sasl.Mechanism
		switch mech {
		case "PLAIN":
			m = plain.Auth{User: user, Pass: pass}.AsMechanism()
		case "SCRAM-SHA-256":
			m = scram.Auth{User: user, Pass: pass}.AsSha256Mechanism()
		case "SCRAM-SHA-512":
			m = scram.Auth{User: user, Pass: pass}.AsSha512Mechanism()
		default:
			return nil, fmt.Errorf("%w: %s=%q: want PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", ErrAuth, EnvSASLMechanism, mech)
		}
		opts = append(opts, kgo.SASL(m))
	}
	on := strings.ToLower(strings.TrimSpace(getenv(EnvTLS)))
	ca, cert, key, name := getenv(EnvTLSCA), getenv(EnvTLSCert), getenv(EnvTLSKey), getenv(EnvTLSServerName)
	switch on {
	case "", "0", "false", "1", "true":
	default:
		return nil, fmt.Errorf("%w: %s=%q: want 1, true, 0 or false", ErrAuth, EnvTLS, on)
	}
	if on == "1" || on == "true" || ca != "" || cert != "" || key != "" {
		if on == "0" || on == "false" {
			return nil, fmt.Errorf("%w: %s=%s with TLS files set", ErrAuth, EnvTLS, on)
		}
		cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: name}
		if ca != "" {
			pem, err := os.ReadFile(ca)
			if err != nil {
				return nil, fmt.Errorf("%w: %s: %v", ErrAuth, EnvTLSCA, err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("%w: %s=%s: no PEM certificate in it", ErrAuth, EnvTLSCA, ca)
			}
			cfg.RootCAs = pool
		}
		if (cert == "") != (key == "") {
			return nil, fmt.Errorf("%w: %s and %s go together", ErrAuth, EnvTLSCert, EnvTLSKey)
		}
		if cert != "" {
			c, err := tls.LoadX509KeyPair(cert, key)
			if err != nil {
				// The error of LoadX509KeyPair names files, never their content.
				return nil, fmt.Errorf("%w: client certificate: %v", ErrAuth, err)
			}
			cfg.Certificates = []tls.Certificate{c}
		}
		opts = append(opts, kgo.DialTLSConfig(cfg))
	}
	return opts, nil
}
