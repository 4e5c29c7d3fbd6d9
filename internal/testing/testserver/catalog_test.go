package testserver_test

import (
	"slices"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
)

// TestCatalog: each product has 100 tools with distinct names, in the
// product's naming style, whose required arguments are declared.
func TestCatalog(t *testing.T) {
	seen := make(map[string]bool)
	for _, d := range testserver.CatalogDomains() {
		tools := testserver.CatalogTools(d)
		if len(tools) != 100 {
			t.Errorf("%s: %d tools, want 100", d, len(tools))
		}
		for _, tool := range tools {
			if seen[d+"/"+tool.Name] {
				t.Errorf("%s: duplicate tool %s", d, tool.Name)
			}
			seen[d+"/"+tool.Name] = true
			schema := tool.InputSchema.(map[string]any)
			props := schema["properties"].(map[string]any)
			required, _ := schema["required"].([]any)
			for _, r := range required {
				if _, ok := props[r.(string)]; !ok {
					t.Errorf("%s: %s requires %q, which it does not declare", d, tool.Name, r)
				}
			}
		}
	}
	names := []string{testserver.CatalogToolName("crm", "create", "credit_note"), testserver.CatalogToolName("billing", "create", "credit_note"),
		testserver.CatalogToolName("tracker", "create", "credit_note"), testserver.CatalogToolName("calendar", "create", "credit_note")}
	if want := []string{"create_credit_note", "createCreditNote", "create-credit-note", "credit_note_create"}; !slices.Equal(names, want) {
		t.Errorf("testserver.CatalogToolName() = %v, want %v", names, want)
	}
}
