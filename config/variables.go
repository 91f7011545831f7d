package config

import (
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/caarlos0/env/v10"
)

// Variable describes one DISTFEAT_ variable, as the tags of its Config field declare it.
type Variable struct {
	// Name is the variable without the DISTFEAT_ prefix, e.g. WINDOW_SIZE.
	Name string
	// Default is the value used when the variable is unset or empty; "" means none.
	Default string
	// Doc is a one-line description (docs/configuration.md, flag usage).
	Doc string
	// Values is the value placeholder shown in usage: allowed values (set|count|time|session)
	// or the kind of value with its unit (duration, bytes, host:port).
	Values string
	// Secret variables are never logged.
	Secret bool
	// Security marks the TLS/SASL variables, shared by every command that talks to a cluster.
	Security bool

	kind reflect.Kind
}

// Env is the full variable name, e.g. DISTFEAT_WINDOW_SIZE.
func (v Variable) Env() string { return EnvPrefix + v.Name }

// Flag is the name of the flag that mirrors the variable, e.g. window-size.
func (v Variable) Flag() string { return strings.ToLower(strings.ReplaceAll(v.Name, "_", "-")) }

// HasDefault reports whether the variable has a default value.
func (v Variable) HasDefault() bool { return v.Default != "" }

// IsBool reports whether the variable is a boolean (its flag may be given without a value).
func (v Variable) IsBool() bool { return v.kind == reflect.Bool }

// Variables returns every variable of the worker configuration, in the struct's order.
func Variables() []Variable { return variablesOf(&Config{}) }

// SecurityVariables returns the TLS/SASL variables, which the client commands (produce, tail)
// read as well as the worker.
func SecurityVariables() []Variable { return variablesOf(&Security{}) }

// variablesOf lists the variables of *Config or *Security: names and defaults as the env
// library reads them (GetFieldParams), documentation from the same fields' doc and values tags.
func variablesOf(ptr any) []Variable {
	params, err := env.GetFieldParamsWithOptions(ptr, env.Options{Environment: map[string]string{}})
	if err != nil {
		panic(fmt.Sprintf("config: the struct tags are invalid: %v", err)) // constants: every test fails
	}
	var fields []reflect.StructField
	for _, f := range reflect.VisibleFields(reflect.TypeOf(ptr).Elem()) {
		if envName(f) != "" {
			fields = append(fields, f)
		}
	}
	vars := make([]Variable, len(params))
	for i, p := range params {
		f := fields[i]
		_, security := reflect.TypeOf(Security{}).FieldByName(f.Name)
		vars[i] = Variable{Name: p.OwnKey, Default: p.DefaultValue, Doc: f.Tag.Get("doc"), Values: f.Tag.Get("values"),
			Secret: f.Tag.Get("secret") == "true", Security: security, kind: f.Type.Kind()}
		switch {
		case vars[i].Values != "":
		case f.Type.Kind() == reflect.Bool:
			vars[i].Values = "true|false"
		case f.Type == reflect.TypeOf(time.Duration(0)):
			vars[i].Values = "duration"
		}
	}
	return vars
}

// envName is the variable a struct field reads (without the prefix), "" for none.
func envName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("env"), ",")
	return name
}
