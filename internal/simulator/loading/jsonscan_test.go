package loading

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// genericHead is decodeDocument's head as encoding/json fills it: what
// scanHead must agree with whenever it answers.
func genericHead(t testing.TB, data []byte) jsonHead {
	var head struct {
		Kind, APIVersion interface{}
		Metadata         struct{ Name, Namespace interface{} }
		Items            json.RawMessage
	}
	var typeErr *json.UnmarshalTypeError
	if err := json.Unmarshal(data, &head); err != nil && !errors.As(err, &typeErr) {
		t.Fatalf("generic decode of valid JSON failed: %v", err)
	}
	h := jsonHead{items: head.Items}
	h.kind, _ = head.Kind.(string)
	h.apiVersion, _ = head.APIVersion.(string)
	h.name, _ = head.Metadata.Name.(string)
	h.namespace, _ = head.Metadata.Namespace.(string)
	return h
}

var headCmp = cmp.AllowUnexported(jsonHead{})

func TestScanHeadReadsWhatEncodingJSONReads(t *testing.T) {
	cases := []struct {
		name string
		doc  string
		// fallback: scanHead must decline, leaving it to encoding/json.
		fallback bool
	}{
		{name: "a plain object's kind, apiVersion, name and namespace are read", doc: `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","namespace":"b"}}`},
		{name: "keys match whatever their case, as encoding/json matches them", doc: `{"KIND":"Pod","ApiVersion":"v1","METADATA":{"Name":"a"}}`},
		{name: "a key with the Kelvin sign folds to kind", doc: "{\"\u212aind\":\"Pod\",\"apiVersion\":\"v1\"}"},
		{name: "a kind nested in the spec is not the object's", doc: `{"spec":{"kind":"X","metadata":{"name":"n"}},"kind":"Pod","apiVersion":"v1"}`},
		{name: "a kind that is no string reads as empty", doc: `{"kind":3,"apiVersion":null,"metadata":{"name":["x"]}}`},
		{name: "metadata that is no object leaves name and namespace empty", doc: `{"kind":"Pod","apiVersion":"v1","metadata":"x"}`},
		{name: "escaped values are decoded", doc: `{"kind":"P\u006fd","apiVersion":"v1","metadata":{"name":"a\"b\\c"}}`},
		{name: "a name that is not UTF-8 is read as encoding/json replaces it", doc: "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"a\xffb\"}}"},
		{name: "a List's items are its raw value, spaces and all", doc: "{\"kind\":\"List\",\"apiVersion\":\"v1\",\"items\" : [ {\"kind\":\"Pod\"} , 1,\"s\" ,[2],null ] }"},
		{name: "strings with brackets and quotes do not end the items early", doc: `{"items":[{"a":"]}\"[{"},{"b":"\\"}],"kind":"List","apiVersion":"v1"}`},
		{name: "items given as null stay null", doc: `{"kind":"List","apiVersion":"v1","items":null}`},
		{name: "a kind given twice is left to encoding/json", doc: `{"kind":"Pod","Kind":"Node","apiVersion":"v1"}`, fallback: true},
		{name: "metadata given twice is left to encoding/json (it merges them)", doc: `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a"},"metadata":{"namespace":"b"}}`, fallback: true},
		{name: "a name given twice is left to encoding/json", doc: `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","NAME":"b"}}`, fallback: true},
		{name: "an escaped key is left to encoding/json", doc: `{"k\u0069nd":"Pod","apiVersion":"v1"}`, fallback: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			data := []byte(tc.doc)
			if !json.Valid(data) {
				t.Fatalf("test document is not valid JSON")
			}
			got, ok := scanHead(data)
			if ok == tc.fallback {
				t.Fatalf("scanHead ok = %v, want %v", ok, !tc.fallback)
			}
			if !ok {
				return
			}
			if diff := cmp.Diff(genericHead(t, data), got, headCmp); diff != "" {
				t.Errorf("scanHead differs from encoding/json (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestSplitArrayGivesEncodingJSONsElements(t *testing.T) {
	for _, doc := range []string{`[]`, ` [ ] `, `[1]`, `[{"a":[1,2,{"b":"]"}]},"x\"]",true,null,-1.5e3]`, "[\n {\"kind\":\"Pod\"},\n\t{}\n]"} {
		var want []json.RawMessage
		if err := json.Unmarshal([]byte(doc), &want); err != nil {
			t.Fatal(err)
		}
		got, ok := splitArray([]byte(doc))
		if !ok || len(got) != len(want) {
			t.Fatalf("splitArray(%s) = %d elements, ok %v; want %d", doc, len(got), ok, len(want))
		}
		for i := range got {
			if string(got[i]) != string(want[i]) {
				t.Errorf("splitArray(%s)[%d] = %s, want %s", doc, i, got[i], want[i])
			}
		}
	}
	if _, ok := splitArray([]byte(`{"a":1}`)); ok {
		t.Errorf("splitArray of an object: ok, want not an array")
	}
}

// FuzzScanHead: on any valid JSON object, scanHead either declines or
// reads exactly what encoding/json reads.
func FuzzScanHead(f *testing.F) {
	for _, s := range []string{`{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a"}}`, `{"items":[{"kind":"Pod"}],"kind":"List","apiVersion":"v1"}`, `{"Kind":"x","KIND":"y"}`, `{"metadata":{"name":"\u00e9"}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		got, ok := scanHead(data)
		if !ok {
			return
		}
		if diff := cmp.Diff(genericHead(t, data), got, headCmp); diff != "" {
			t.Errorf("scanHead(%q) differs from encoding/json (-want,+got):\n%s", data, diff)
		}
	})
}
