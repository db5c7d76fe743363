// Package p is codestats' fixture: 2 documented exported names of 3.
package p

// A is documented.
func A() int {
	return 1
}

func B() {}

// T is documented.
type T struct{}

func (T) m() {}
