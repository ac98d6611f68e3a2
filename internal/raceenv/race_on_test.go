//go:build race

package raceenv

const raceEnabled = true
