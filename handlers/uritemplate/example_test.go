package uritemplate_test

import (
	"fmt"

	"github.com/mcprt/mcprt/handlers/uritemplate"
)

func Example() {
	t, err := uritemplate.Parse("db://tables/{table}{?limit,offset}")
	if err != nil {
		panic(err)
	}
	fmt.Println(t.Vars())

	vars, ok := t.Match("db://tables/users?offset=20&limit=10&sort=name")
	fmt.Println(ok, vars["table"], vars["limit"], vars["offset"])

	_, ok = t.Match("db://tables/a/b")
	fmt.Println(ok)
	// Output:
	// [table limit offset]
	// true users 10 20
	// false
}

func ExampleTemplate_Match() {
	t, _ := uritemplate.Parse("file:///{+path}")
	vars, ok := t.Match("file:///src/main%20file.go")
	fmt.Println(ok, vars["path"])

	t, _ = uritemplate.Parse("repo://{owner}/{repo}/issues/{id}")
	vars, ok = t.Match("repo://mcprt/mcprt/issues/42")
	fmt.Println(ok, vars)
	// Output:
	// true src/main file.go
	// true map[id:42 owner:mcprt repo:mcprt]
}

func ExampleParse() {
	for _, s := range []string{"users://{id}/profile", "users://{id/profile", "{=x}", "{x:0}", "{}"} {
		_, err := uritemplate.Parse(s)
		fmt.Println(err)
	}
	// Output:
	// <nil>
	// uritemplate: unclosed expression at offset 8 in "users://{id/profile"
	// uritemplate: reserved operator '=' at offset 1 in "{=x}"
	// uritemplate: invalid prefix ":0" at offset 2 in "{x:0}"
	// uritemplate: empty expression at offset 1 in "{}"
}
