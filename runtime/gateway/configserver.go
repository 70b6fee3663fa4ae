package gateway

import (
	"encoding/json"
	"fmt"
)

// ConfigServerNames are the names of a configuration's servers (see
// ParseConfig), in the file's order, disabled ones included. Only the
// file's shape is checked: not the servers.
func ConfigServerNames(data []byte) ([]string, error) {
	_, names, _, err := configServers(data)
	return names, err
}

// ParseConfigServer reads only the server called name of a configuration
// (see ParseConfig) and returns a Config with that one backend. It is for
// a tool that runs one server of a file, as mcprt's client verbs do:
// another server's problems (a missing "command", an unset variable) are
// not that server's, and do not stop it. A name the file does not have,
// or a disabled server, is a *ConfigError. Like ParseConfig, it reads no
// file: Config.LoadEnvFiles reads the backend's "envFile".
func ParseConfigServer(data []byte, name string, lookupEnv func(string) (string, bool)) (*Config, error) {
	key, names, raws, err := configServers(data)
	if err != nil {
		return nil, err
	}
	for i, n := range names {
		if n != name {
			continue
		}
		var d struct {
			Disabled bool `json:"disabled"`
		}
		if json.Unmarshal(raws[i], &d) == nil && d.Disabled {
			return nil, &ConfigError{Backend: name, Key: "disabled", Problem: "the server is disabled in this file"}
		}
		// The server alone, in a file of its own: ParseConfig checks it
		// as it would in the whole file.
		one, err := json.Marshal(map[string]map[string]json.RawMessage{key: {name: raws[i]}})
		if err != nil {
			return nil, &ConfigError{Backend: name, Problem: err.Error()}
		}
		return ParseConfig(one, lookupEnv)
	}
	return nil, &ConfigError{Key: key, Problem: fmt.Sprintf("no server %q", name)}
}

// configServers finds a configuration's servers: the key that holds them
// ("mcpServers", or "servers" as VS Code writes it), their names and their
// raw objects, in the file's order.
func configServers(data []byte) (key string, names []string, raws []json.RawMessage, err error) {
	data = stripJSONC(data)
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return "", nil, nil, syntaxError(data, err)
	}
	key = "mcpServers"
	servers, ok := top[key]
	if vs, vsOK := top["servers"]; vsOK {
		if ok {
			return "", nil, nil, &ConfigError{Key: "servers", Problem: `give the servers in "mcpServers" or in "servers", not both`}
		}
		servers, ok, key = vs, true, "servers"
	}
	if !ok {
		return "", nil, nil, &ConfigError{Key: "mcpServers", Problem: "missing: the file must be a JSON object with an \"mcpServers\" object of servers by name"}
	}
	names, raws, err = orderedObject(servers)
	if err != nil {
		return "", nil, nil, &ConfigError{Key: key, Problem: err.Error()}
	}
	return key, names, raws, nil
}
