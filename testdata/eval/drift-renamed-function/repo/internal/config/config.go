package config

// ParseArgs reads flags and environment.
func ParseArgs(args []string) (Config, error) { return Config{}, nil }

type Config struct{ Addr string }
