package endpoint

import (
	"reflect"
	"testing"
)

// TestQPCountersAllInt64: qpCounters.add treats the struct as an array of
// int64; a field of another type would break it.
func TestQPCountersAllInt64(t *testing.T) {
	typ := reflect.TypeOf(qpCounters{})
	for i := range typ.NumField() {
		if f := typ.Field(i); f.Type.Kind() != reflect.Int64 {
			t.Errorf("qpCounters.%s is %v, want int64", f.Name, f.Type)
		}
	}
	if int(qpCounterWords) != typ.NumField() {
		t.Errorf("qpCounterWords %d, fields %d", qpCounterWords, typ.NumField())
	}
	var a, b qpCounters
	a.txPkts, a.reselections = 1, 2
	b.txPkts, b.reselections, b.ceRx = 10, 20, 5
	a.add(&b)
	if a.txPkts != 11 || a.reselections != 22 || a.ceRx != 5 {
		t.Errorf("add: %+v", a)
	}
}
