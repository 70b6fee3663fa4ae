package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/mcprt/mcprt/handlers/skillmd"
)

// Skill is a skill's entry, as skills/list and skills/get give it: the
// URI of its SKILL.md, its frontmatter (as JSON, verbatim), and its files
// with their digests and sizes, or Dynamic when the server lists none.
type Skill struct {
	URI         string          `json:"uri"`
	Frontmatter json.RawMessage `json:"frontmatter"`
	Resources   []SkillFile     `json:"-"`
	Dynamic     bool            `json:"-"`
}

// SkillFile is one file of a skill.
type SkillFile struct {
	URI    string `json:"uri"`
	Digest string `json:"digest"`
	Size   int64  `json:"size"`
}

// UnmarshalJSON reads resources, an array of files or "dynamic".
func (s *Skill) UnmarshalJSON(b []byte) error {
	var w struct {
		URI         string          `json:"uri"`
		Frontmatter json.RawMessage `json:"frontmatter"`
		Resources   json.RawMessage `json:"resources"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*s = Skill{URI: w.URI, Frontmatter: w.Frontmatter}
	if string(w.Resources) == `"dynamic"` {
		s.Dynamic = true
		return nil
	}
	if err := json.Unmarshal(w.Resources, &s.Resources); err != nil {
		return fmt.Errorf("skill %s: resources is neither a list of files nor \"dynamic\": %w", w.URI, err)
	}
	return nil
}

// ListSkills lists the server's skills, every page. It reads no file of
// any skill: a host loads a skill (LoadSkill) only when it needs it.
func (c *Client) ListSkills(ctx context.Context, opts ...CallOption) ([]Skill, error) {
	var all []Skill
	cursor := ""
	seen := map[string]bool{}
	for range maxPages {
		params := map[string]string{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		var page struct {
			Skills     []Skill `json:"skills"`
			NextCursor string  `json:"nextCursor"`
		}
		if err := c.Call(ctx, "skills/list", params, &page, opts...); err != nil {
			return nil, err
		}
		all = append(all, page.Skills...)
		if page.NextCursor == "" {
			return all, nil
		}
		if seen[page.NextCursor] {
			return nil, fmt.Errorf("skills/list: the server repeated cursor %q", page.NextCursor)
		}
		seen[page.NextCursor] = true
		cursor = page.NextCursor
	}
	return nil, fmt.Errorf("skills/list: more than %d pages", maxPages)
}

// GetSkill returns the entry of one skill, by the URI of its SKILL.md.
func (c *Client) GetSkill(ctx context.Context, uri string, opts ...CallOption) (*Skill, error) {
	var res struct {
		Skill *Skill `json:"skill"`
	}
	if err := c.Call(ctx, "skills/get", map[string]string{"uri": uri}, &res, opts...); err != nil {
		return nil, err
	}
	if res.Skill == nil {
		return nil, fmt.Errorf("skills/get %s: no skill in the result", uri)
	}
	return res.Skill, nil
}

// LoadSkill reads a skill's files as a host must: its SKILL.md first,
// checked against the entry (its size, then its digest, then its
// frontmatter, field by field), and only then its other files, each
// checked against its size and digest. Content that fails a check is
// not used: LoadSkill returns an error and reads nothing more. The files
// come back by URI. A "dynamic" skill has no digests to check its files
// by: only its SKILL.md is read, and its frontmatter compared.
func (c *Client) LoadSkill(ctx context.Context, s *Skill, opts ...CallOption) (map[string][]byte, error) {
	manifest, err := c.readSkillFile(ctx, s, s.URI, opts)
	if err != nil {
		return nil, err
	}
	front, _, err := skillmd.Parse(string(manifest))
	if err != nil {
		return nil, fmt.Errorf("skill %s: %w", s.URI, err)
	}
	if !sameJSON(front, s.Frontmatter) {
		return nil, fmt.Errorf("skill %s: the frontmatter of its SKILL.md is not the entry's: %s, not %s", s.URI, front, s.Frontmatter)
	}
	files := map[string][]byte{s.URI: manifest}
	for _, f := range s.Resources {
		if f.URI == s.URI {
			continue
		}
		b, err := c.readSkillFile(ctx, s, f.URI, opts)
		if err != nil {
			return nil, err
		}
		files[f.URI] = b
	}
	return files, nil
}

// readSkillFile reads one file of s and checks it against its entry.
func (c *Client) readSkillFile(ctx context.Context, s *Skill, uri string, opts []CallOption) ([]byte, error) {
	res, err := c.ReadResource(ctx, uri, opts...)
	if err != nil {
		return nil, err
	}
	if len(res.Contents) != 1 {
		return nil, fmt.Errorf("skill file %s: %d contents, want 1", uri, len(res.Contents))
	}
	content := res.Contents[0]
	data := []byte(content.Text)
	if content.Blob != nil {
		data = content.Blob
	}
	if s.Dynamic {
		return data, nil
	}
	for _, f := range s.Resources {
		if f.URI != uri {
			continue
		}
		switch {
		case int64(len(data)) != f.Size:
			return nil, fmt.Errorf("skill file %s: %d bytes, the entry says %d: not used", uri, len(data), f.Size)
		case skillmd.Digest(data) != f.Digest:
			return nil, fmt.Errorf("skill file %s: digest %s, the entry says %s: not used", uri, skillmd.Digest(data), f.Digest)
		}
		return data, nil
	}
	return nil, fmt.Errorf("skill file %s is not among the skill's resources", uri)
}

// sameJSON compares two JSON values by content.
func sameJSON(a, b json.RawMessage) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
