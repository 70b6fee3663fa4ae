package skills_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing/fstest"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/handlers/skills"
)

// A server that ships one skill: Serve reads the tree (os.DirFS("skills")
// in a real server) and offers it, with the extension declared; a host
// lists it with skills/list and reads its files as resources.
func ExampleServe() {
	tree := fstest.MapFS{
		"pdf/SKILL.md":            {Data: []byte("---\nname: pdf\ndescription: Works with PDF files.\n---\nRead FORMS.md.\n")},
		"pdf/references/FORMS.md": {Data: []byte("# Forms\n")},
	}
	srv := handlers.NewServer(mcp.Implementation{Name: "example", Version: "1.0.0"}, "")
	if err := skills.Serve(srv, tree, skills.Options{}); err != nil {
		fmt.Println(err)
		return
	}
	ext, _ := json.Marshal(srv.Capabilities()["extensions"])
	fmt.Println(string(ext))

	// What the session does with a skills/list request.
	list, _ := srv.Method("skills/list")
	res, err := list.Run(context.Background(), &handlers.Request{Method: "skills/list", Params: json.RawMessage(`{}`), Version: "2026-07-28", Modern: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	b, _ := json.Marshal(res)
	var page struct {
		Skills []struct {
			URI       string
			Resources []struct{ URI string }
		}
	}
	json.Unmarshal(b, &page)
	for _, s := range page.Skills {
		fmt.Println(s.URI)
		for _, r := range s.Resources {
			fmt.Println("  ", r.URI)
		}
	}
	// Output:
	// {"io.modelcontextprotocol/skills":{"directoryRead":true}}
	// skill://pdf/SKILL.md
	//    skill://pdf/SKILL.md
	//    skill://pdf/references/FORMS.md
}
