package views

import (
	"strconv"

	"github.com/ductor/ductor/app/store"
)

// shortHash is the first 12 characters of a manifest hash.
func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

func versionLabel(n int) string { return "v" + strconv.Itoa(n) }

func published(v store.VersionSummary) bool { return v.UnpublishedAt == nil }

func itoa(n int) string { return strconv.Itoa(n) }

func boolAttr(b bool) string { return strconv.FormatBool(b) }

// editorKinds is what the editor's script knows of step types.
func editorKinds() map[string]any {
	return map[string]any{"kinds": StepKinds, "common": CommonFields, "for_each": ForEachField, "retry": RetryFields,
		"template_types": TemplateTypes, "workflow": WorkflowFields}
}

func lineNo(n int) string {
	if n == 0 {
		return ""
	}
	return itoa(n)
}

// plural is "1 test", "2 tests".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return itoa(n) + " " + noun + "s"
}
