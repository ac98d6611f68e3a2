package offline

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

// FuzzFindPhrases holds findPhrases, with its cheap filters, to the two
// patterns run over every segment, and headingDate's filter to its
// pattern: a filter may only skip text the pattern cannot match.
func FuzzFindPhrases(f *testing.F) {
	for _, s := range []string{
		"yesterday we moved the importer", "Yesterday, Today, Blockers", "the day before yesterday", "three weeks ago",
		"LAST MONDAY", "yeſterday", "laſt week", "thiſ morning", "two dayſ ago", "this Week", "next year",
		"昨天，我们把导入器迁到了新集群。", "上个星期", "上礼拜", "3天前", "三 年前", "十二个月前", "两周前", "今早", "大前天", "目前天津",
		"部署前先在预发环境验证迁移脚本。", "用户偏好简洁的提交信息，主题行不超过五十个字符。", "2026-11-18", "2026年11月18日",
		"", "\xff\xfe", "TODAY", "Last", "tOnIgHt", "AgO", "y", "nex", "latest news", "this", "ago", "yester\xffday", "今\xff天",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, seg string) {
		p := datePatterns()
		got := findPhrases(p.en, p.zh, seg)
		want := append(p.en.FindAllStringIndex(seg, -1), p.zh.FindAllStringIndex(seg, -1)...)
		if len(got) != len(want) || len(got) > 0 && !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: filtered %v, patterns alone %v", seg, got, want)
		}
		if isASCII(seg) {
			lowered := false
			for _, c := range enCues {
				lowered = lowered || strings.Contains(strings.ToLower(seg), c)
			}
			if hasASCIICue(seg) != lowered {
				t.Fatalf("%q: hasASCIICue %v, lowered and searched %v", seg, !lowered, lowered)
			}
		}
		// The file filter, against the lowered search it was.
		was := false
		for _, c := range []byte(seg) {
			was = was || c >= 0x80
		}
		for _, c := range enCues {
			was = was || bytes.Contains(bytes.ToLower([]byte(seg)), []byte(c))
		}
		if mayHoldDates([]byte(seg)) != was {
			t.Fatalf("%q: mayHoldDates %v, was %v", seg, !was, was)
		}
		if !hasDigit(seg) && p.headingDate.MatchString(seg) {
			t.Fatalf("%q: the heading date pattern matches with no digit", seg)
		}
	})
}
