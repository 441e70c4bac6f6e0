package jinja

import (
	"strconv"
	"strings"
	"time"
)

// goLayouts are the directives that C's "C" locale prints in a fixed
// layout Go's time.Format can write directly; padding flags do not apply.
var goLayouts = map[byte]string{
	'z': "-0700",
	'F': "2006-01-02",
	'T': "15:04:05",
	'D': "01/02/06",
	'R': "15:04",
	'c': "Mon Jan _2 15:04:05 2006",
	'x': "01/02/06",
	'X': "15:04:05",
}

// Strftime formats t with a C strftime format (the directives templates use,
// plus glibc's "%-d" style flag that drops padding).
func Strftime(t time.Time, format string) string {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' || i+1 >= len(format) {
			b.WriteByte(c)
			continue
		}
		i++
		noPad := false
		if format[i] == '-' && i+1 < len(format) {
			noPad = true
			i++
		}
		pad := func(n, width int) string {
			s := strconv.Itoa(n)
			if noPad {
				return s
			}
			for len(s) < width {
				s = "0" + s
			}
			return s
		}
		if layout, ok := goLayouts[format[i]]; ok {
			b.WriteString(t.Format(layout))
			continue
		}
		switch format[i] {
		case 'a':
			b.WriteString(t.Weekday().String()[:3])
		case 'A':
			b.WriteString(t.Weekday().String())
		case 'b', 'h':
			b.WriteString(t.Month().String()[:3])
		case 'B':
			b.WriteString(t.Month().String())
		case 'd':
			b.WriteString(pad(t.Day(), 2))
		case 'e':
			if noPad {
				b.WriteString(strconv.Itoa(t.Day()))
			} else {
				s := strconv.Itoa(t.Day())
				if len(s) < 2 {
					s = " " + s
				}
				b.WriteString(s)
			}
		case 'm':
			b.WriteString(pad(int(t.Month()), 2))
		case 'y':
			b.WriteString(pad(t.Year()%100, 2))
		case 'Y':
			b.WriteString(strconv.Itoa(t.Year()))
		case 'H':
			b.WriteString(pad(t.Hour(), 2))
		case 'I':
			h := t.Hour() % 12
			if h == 0 {
				h = 12
			}
			b.WriteString(pad(h, 2))
		case 'M':
			b.WriteString(pad(t.Minute(), 2))
		case 'S':
			b.WriteString(pad(t.Second(), 2))
		case 'p':
			if t.Hour() < 12 {
				b.WriteString("AM")
			} else {
				b.WriteString("PM")
			}
		case 'j':
			b.WriteString(pad(t.YearDay(), 3))
		case 'Z':
			name, _ := t.Zone()
			b.WriteString(name)
		case 'u':
			wd := int(t.Weekday())
			if wd == 0 {
				wd = 7
			}
			b.WriteString(strconv.Itoa(wd))
		case 'w':
			b.WriteString(strconv.Itoa(int(t.Weekday())))
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case '%':
			b.WriteByte('%')
		default:
			b.WriteByte('%')
			if noPad {
				b.WriteByte('-')
			}
			b.WriteByte(format[i])
		}
	}
	return b.String()
}
