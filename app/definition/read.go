package definition

// Reading an object through its field table.

// knownFields reports every field the table does not list.
func (o object) knownFields(fs []Field) { o.known(fieldNames(fs)...) }

// readAll checks o against spec and normalises every field into out, in
// table order; of a group of exclusive fields only the one set is read.
func (o object) readAll(spec WithSpec, out map[string]any) {
	o.knownFields(spec.Fields)
	chosen := map[string]string{}
	for _, f := range spec.Fields {
		if f.Group == "" {
			o.readField(f, out)
			continue
		}
		pick, resolved := chosen[f.Group]
		if !resolved {
			pick = o.oneOf(!spec.Groups[f.Group], groupMembers(spec.Fields, f.Group)...)
			chosen[f.Group] = pick
		}
		if pick == f.Name {
			o.readField(f, out)
		}
	}
}

func groupMembers(fs []Field, group string) []string {
	var out []string
	for _, f := range fs {
		if f.Group == group {
			out = append(out, f.Name)
		}
	}
	return out
}

// readField normalises one field by its kind: defaults filled in,
// durations in milliseconds under NAME_ms.
func (o object) readField(f Field, out map[string]any) {
	if f.read != nil {
		f.read(o, f, out)
		return
	}
	switch f.Kind {
	case KindString:
		o.readString(f, out)
	case KindEnum:
		def, _ := f.Default.(string)
		out[f.Name] = o.enum(f.Name, def, f.Enum...)
	case KindExpr:
		if f.Required && !o.has(f.Name) {
			o.problem(f.Name, "is required")
			return
		}
		queued := len(o.c.exprs)
		o.exprInto(out, f.Name, f.Expr)
		if f.Secrets && len(o.c.exprs) > queued {
			o.c.exprs[queued].secrets = true
		}
	case KindInteger:
		o.readInteger(f, out)
	case KindDuration:
		if f.Required && !o.has(f.Name) {
			o.problem(f.Name, "is required")
		}
		out[durationKey(f.Name)] = o.durationMS(f.Name, defaultMS(f))
	case KindStrings:
		list, _ := o.strings(f.Name)
		out[f.Name] = orEmpty(list)
	case KindSchema:
		if v, ok := o.m[f.Name]; ok {
			if err := checkSchema(v); err != nil {
				o.problem(f.Name, "%v", err)
			}
			out[f.Name] = v
		}
	case KindAny:
		if v, ok := o.m[f.Name]; ok {
			out[f.Name] = v
		}
	default:
		panic("definition: no reader for " + string(f.Kind) + " field " + f.Name)
	}
}

func durationKey(name string) string { return name + "_ms" }

// defaultMS is a duration field's default in milliseconds.
func defaultMS(f Field) int64 {
	s, ok := f.Default.(string)
	if !ok {
		return 0
	}
	d, err := ParseDuration(s)
	if err != nil {
		panic("definition: bad default of " + f.Name)
	}
	return d.Milliseconds()
}

func (o object) readString(f Field, out map[string]any) {
	var s string
	switch def, hasDefault := f.Default.(string); {
	case f.Required:
		s = o.required(f.Name)
	case hasDefault:
		s = o.strOr(f.Name, def)
	default:
		var ok bool
		if s, ok = o.str(f.Name); !ok {
			return
		}
	}
	if s != "" && f.Pattern != nil && !f.Pattern.MatchString(s) {
		o.problem(f.Name, "must be %s, not %q", f.PatternDoc, s)
	}
	out[f.Name] = s
}

func (o object) readInteger(f Field, out map[string]any) {
	if def, ok := asInt(f.Default); ok {
		out[f.Name] = o.intOr(f.Name, def, f.Min, f.Max)
		return
	}
	if i, ok := o.integer(f.Name, f.Min, f.Max); ok {
		out[f.Name] = i
	}
}

// readNothing marks a field another field's reader reads.
func readNothing(object, Field, map[string]any) {}
