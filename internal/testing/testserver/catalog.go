package testserver

// A big, realistic catalog for tool search: ten back-office products of
// 100 tools each (ten entities, ten operations), generated
// deterministically, with the argument descriptions, enums, bounds and
// naming styles of real servers.

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A catalogField is one property of an entity.
type catalogField struct {
	name, typ, desc string
	enum            []string
}

// A catalogEntity is a kind of record of a product: the name of its tools
// ("invoice", "credit_note") and its fields.
type catalogEntity struct {
	name, plural, about string
	fields              []catalogField
}

// A catalogDomain is one product, served by one server.
type catalogDomain struct {
	name, product string
	style         func(verb, entity string) string // the product's tool naming
	entities      []catalogEntity
}

// str is a catalogField of type string with an optional enum.
func str(name, desc string, enum ...string) catalogField {
	return catalogField{name: name, typ: "string", desc: desc, enum: enum}
}

// typed is a catalogField of another type.
func typed(typ, name, desc string) catalogField {
	return catalogField{name: name, typ: typ, desc: desc}
}

// ent is a catalogEntity whose plural is its name with an s.
func ent(name, about string, fields ...catalogField) catalogEntity {
	return catalogEntity{name: name, plural: name + "s", about: about, fields: fields}
}

// Tool naming styles of real servers: verb_entity, verb-entity,
// entity_verb and verbEntity.
func snake(verb, entity string) string { return verb + "_" + entity }
func kebab(verb, entity string) string { return strings.ReplaceAll(verb+"-"+entity, "_", "-") }
func entityFirst(verb, entity string) string {
	return entity + "_" + verb
}
func camel(verb, entity string) string {
	var b strings.Builder
	b.WriteString(verb)
	for _, w := range strings.Split(entity, "_") {
		b.WriteString(strings.ToUpper(w[:1]) + w[1:])
	}
	return b.String()
}

// catalogDomains are the products, in server order.
var catalogDomains = []catalogDomain{
	{"crm", "the CRM", snake, []catalogEntity{
		ent("contact", "A person the sales team talks to.", str("full_name", "Full name of the person."), str("email", "Email address."), str("phone", "Phone number in E.164 format."), str("company_id", "The company the contact works for.")),
		{"company", "companies", "An organisation that buys or may buy from us.", []catalogField{str("name", "Legal name of the company."), str("domain", "Web domain, e.g. example.com."), str("industry", "Industry sector.", "software", "retail", "finance", "health", "manufacturing"), typed("integer", "employees", "Number of employees.")}},
		ent("deal", "A sales opportunity moving through the pipeline stages.", str("title", "Short title of the deal."), typed("number", "amount", "Expected revenue in the deal's currency."), str("stage", "Pipeline stage.", "prospecting", "qualification", "proposal", "negotiation", "won", "lost"), str("close_date", "Expected close date (YYYY-MM-DD).")),
		ent("lead", "An unqualified prospect from a form, a list or an event.", str("full_name", "Name of the prospect."), str("source", "Where the lead came from.", "web", "event", "referral", "cold_call"), typed("integer", "score", "Lead score from 0 to 100.")),
		ent("note", "A free-text note attached to a contact, company or deal.", str("body", "Text of the note (Markdown)."), str("record_id", "ID of the contact, company or deal the note is about.")),
		ent("task", "A follow-up to do for a record, with a due date and an owner.", str("subject", "What to do."), str("due_date", "Due date (YYYY-MM-DD)."), str("owner_id", "User who must do it.")),
		ent("pipeline", "A sequence of sales stages deals move through.", str("name", "Name of the pipeline."), typed("array", "stages", "Ordered stage names.")),
		ent("meeting", "A logged sales meeting or call with contacts.", str("subject", "Subject of the meeting."), str("start_time", "Start time (RFC 3339)."), typed("integer", "duration_minutes", "Length in minutes.")),
		ent("quote", "A priced offer sent to a customer for a deal.", str("deal_id", "The deal the quote belongs to."), typed("number", "discount_percent", "Discount on the list price."), str("valid_until", "Expiry date of the offer.")),
		ent("product", "An item of the sales catalog with its list price.", str("name", "Product name."), str("sku", "Stock keeping unit."), typed("number", "unit_price", "List price per unit.")),
	}},
	{"billing", "the billing system", camel, []catalogEntity{
		ent("invoice", "A bill sent to a customer for goods or services, with line items and a due date.", str("customer_id", "The customer billed."), typed("array", "line_items", "Items billed: description, quantity, unit price."), str("due_date", "Payment due date (YYYY-MM-DD)."), str("currency", "ISO 4217 currency code.", "USD", "EUR", "GBP", "JPY")),
		ent("customer", "A paying account with its billing address and payment methods.", str("name", "Customer or company name."), str("email", "Billing email address."), str("tax_id", "VAT or tax number.")),
		ent("subscription", "A recurring charge of a customer on a plan.", str("customer_id", "The subscriber."), str("plan_id", "The plan subscribed to."), str("billing_cycle", "How often to charge.", "monthly", "yearly"), typed("integer", "quantity", "Number of seats.")),
		ent("payment", "Money received from a customer by card, transfer or wallet.", typed("number", "amount", "Amount charged."), str("method", "Payment method.", "card", "bank_transfer", "wallet"), str("invoice_id", "The invoice paid.")),
		ent("refund", "Money given back to a customer for a payment.", str("payment_id", "The payment to refund."), typed("number", "amount", "Amount to give back; the whole payment by default."), str("reason", "Why the money is returned.", "duplicate", "fraudulent", "requested_by_customer")),
		ent("plan", "A price point of the product, charged per period.", str("name", "Plan name."), typed("number", "price", "Price per billing period."), str("interval", "Billing period.", "month", "year")),
		ent("coupon", "A discount code customers apply at checkout.", str("code", "The code customers type."), typed("number", "percent_off", "Percentage discount."), typed("integer", "max_redemptions", "How many times it can be used.")),
		ent("credit_note", "A document that reduces the amount owed on an invoice.", str("invoice_id", "The invoice credited."), typed("number", "amount", "Amount credited."), str("memo", "Note printed on the credit note.")),
		ent("tax_rate", "A sales tax or VAT percentage applied to invoices in a region.", str("country", "ISO country code."), typed("number", "percentage", "Tax percentage."), typed("boolean", "inclusive", "Whether prices include the tax.")),
		ent("payout", "A transfer of collected funds to the company's bank account.", typed("number", "amount", "Amount paid out."), str("bank_account_id", "Destination bank account."), str("arrival_date", "Expected arrival date.")),
	}},
	{"tracker", "the issue tracker", kebab, []catalogEntity{
		ent("issue", "A bug, story or task in a project, with a status, priority and assignee.", str("project_key", "Key of the project, e.g. MOB."), str("summary", "One-line summary."), str("issue_type", "Kind of issue.", "bug", "story", "task"), str("priority", "Priority.", "highest", "high", "medium", "low"), str("assignee", "User the issue is assigned to.")),
		ent("project", "A set of issues owned by a team.", str("key", "Short project key."), str("name", "Project name."), str("lead", "Project lead user.")),
		ent("sprint", "A time-boxed iteration of a board.", str("board_id", "The board the sprint belongs to."), str("goal", "Sprint goal."), str("start_date", "First day."), str("end_date", "Last day.")),
		ent("epic", "A large body of work split into issues.", str("name", "Epic name."), str("project_key", "Project of the epic.")),
		ent("comment", "A remark on an issue.", str("issue_key", "The issue commented on, e.g. MOB-42."), str("body", "Comment text.")),
		ent("label", "A tag put on issues to group them.", str("name", "Label text."), str("color", "Hex color.")),
		ent("milestone", "A target date grouping issues.", str("title", "Milestone title."), str("due_on", "Due date.")),
		ent("board", "A kanban or scrum view of issues.", str("name", "Board name."), str("kind", "Board kind.", "kanban", "scrum")),
		ent("release", "A shipped version with its fixed issues and release notes.", str("version", "Version name, e.g. 2.4.0."), str("notes", "Release notes."), typed("boolean", "released", "Whether it shipped.")),
		ent("worklog", "Time logged by a user on an issue.", str("issue_key", "The issue worked on."), typed("integer", "minutes", "Time spent."), str("comment", "What was done.")),
	}},
	{"chat", "the team chat", snake, []catalogEntity{
		ent("channel", "A conversation space for a team or topic.", str("name", "Channel name without #."), typed("boolean", "private", "Whether only invited members can join."), str("topic", "Channel topic.")),
		ent("message", "A post in a channel or direct conversation.", str("channel", "Channel name or ID."), str("text", "Message text (mrkdwn)."), str("thread_ts", "Timestamp of the parent message, to reply in a thread.")),
		ent("user", "A member of the workspace.", str("email", "Email of the member."), str("display_name", "Name shown in the chat.")),
		ent("reaction", "An emoji reaction to a message.", str("channel", "Channel of the message."), str("timestamp", "The message's timestamp."), str("emoji", "Emoji name, e.g. thumbsup.")),
		ent("thread", "The replies to one message.", str("channel", "Channel of the parent message."), str("parent_ts", "Timestamp of the parent message.")),
		ent("reminder", "A message the chat bot sends a user at a time.", str("text", "What to remind of."), str("time", "When, e.g. 'tomorrow at 9am'."), str("user", "Who is reminded.")),
		ent("bookmark", "A link pinned at the top of a channel.", str("channel", "Channel of the bookmark."), str("title", "Link title."), str("link", "URL.")),
		ent("file", "A file shared in a channel.", str("channel", "Channel shared to."), str("filename", "Name of the file."), str("content", "File content.")),
		ent("user_group", "A named group of members that can be mentioned together, e.g. @oncall.", str("handle", "Mention handle."), typed("array", "members", "Member IDs.")),
		ent("status", "A member's presence status with emoji and expiry.", str("text", "Status text, e.g. 'In a meeting'."), str("emoji", "Status emoji."), str("expires_at", "When it clears.")),
	}},
	{"calendar", "the calendar", entityFirst, []catalogEntity{
		ent("event", "A meeting or appointment with a start, an end, attendees and a location.", str("summary", "Event title."), str("start", "Start time (RFC 3339)."), str("end", "End time (RFC 3339)."), typed("array", "attendees", "Attendee emails."), str("location", "Room or address.")),
		ent("calendar", "A named calendar that holds events.", str("name", "Calendar name."), str("time_zone", "IANA time zone.")),
		ent("attendee", "A person invited to an event and their response.", str("event_id", "The event."), str("email", "Attendee email."), str("response", "Response.", "accepted", "declined", "tentative")),
		ent("room", "A bookable meeting room with its capacity.", str("name", "Room name."), typed("integer", "capacity", "Seats."), str("building", "Building.")),
		ent("availability", "The free and busy times of people over a time range.", typed("array", "emails", "People to check."), str("from", "Range start."), str("to", "Range end.")),
		ent("recurrence", "The repeat rule of a recurring event.", str("event_id", "The event."), str("rule", "RRULE, e.g. FREQ=WEEKLY.")),
		ent("invitation", "An invitation email for an event.", str("event_id", "The event."), str("message", "Personal note.")),
		ent("out_of_office", "An absence that declines meetings automatically.", str("start", "First day away."), str("end", "Last day away."), str("auto_reply", "Reply sent to organizers.")),
		ent("holiday", "A public holiday of a country.", str("country", "ISO country code."), typed("integer", "year", "Year.")),
		ent("focus_time", "A blocked period without meetings.", str("start", "Start."), str("end", "End.")),
	}},
	{"drive", "the cloud drive", camel, []catalogEntity{
		ent("document", "A file in the drive: text, spreadsheet, presentation or PDF.", str("title", "Document title."), str("folder_id", "Parent folder."), str("mime_type", "Kind of file.", "text/plain", "application/pdf", "spreadsheet", "presentation")),
		ent("folder", "A directory that holds documents and other folders.", str("name", "Folder name."), str("parent_id", "Parent folder; the root by default.")),
		ent("share_link", "A link that gives access to a document to anyone who has it.", str("document_id", "The document shared."), str("access", "What the link allows.", "view", "comment", "edit"), str("expires_at", "When the link stops working.")),
		ent("permission", "A user's or group's access to a document or folder.", str("item_id", "Document or folder."), str("email", "Who gets access."), str("role", "Access level.", "reader", "commenter", "writer", "owner")),
		ent("revision", "A saved earlier version of a document.", str("document_id", "The document."), str("label", "Name of the version.")),
		ent("annotation", "A comment anchored to text in a document.", str("document_id", "The document."), str("quote", "Text commented on."), str("body", "Comment text.")),
		ent("tag", "A keyword attached to documents to find them.", str("name", "Tag."), str("item_id", "Tagged document.")),
		ent("trash_item", "A deleted item kept for 30 days before it is purged.", str("item_id", "The deleted item.")),
		ent("upload", "A resumable upload of a large file.", str("filename", "Name of the file."), typed("integer", "size_bytes", "Total size."), str("folder_id", "Destination folder.")),
		ent("storage_quota", "The space used and left of a user or team.", str("owner", "User or team.")),
	}},
	{"warehouse", "the data warehouse", snake, []catalogEntity{
		ent("table", "A table of rows and typed columns in a dataset.", str("dataset", "Dataset name."), str("name", "Table name."), typed("array", "columns", "Column names and types.")),
		ent("query", "A SQL statement run against the warehouse.", str("sql", "The SQL text."), typed("integer", "max_rows", "Rows to return at most."), typed("boolean", "dry_run", "Only estimate the bytes scanned.")),
		ent("view", "A saved query used like a table.", str("name", "View name."), str("sql", "Defining SQL.")),
		ent("dataset", "A namespace of tables with a location and a default expiry.", str("name", "Dataset name."), str("location", "Region.", "us", "eu", "asia")),
		ent("backup", "A copy of a table for disaster recovery.", str("table", "Table backed up."), typed("integer", "retention_days", "How long to keep it.")),
		ent("scheduled_job", "A query that runs on a cron schedule and writes a table.", str("sql", "Query to run."), str("cron", "Cron expression."), str("destination", "Table written.")),
		ent("role", "A set of privileges granted to users on datasets.", str("name", "Role name."), typed("array", "privileges", "SELECT, INSERT, …")),
		ent("connection", "Credentials to an external database to query it in place.", str("kind", "Database kind.", "postgres", "mysql", "s3"), str("host", "Host name.")),
		ent("materialized_view", "A view whose result is stored and refreshed.", str("name", "Name."), str("refresh_interval", "How often to refresh.")),
		ent("snapshot", "A read-only point-in-time copy of a table.", str("table", "Source table."), str("as_of", "Point in time.")),
	}},
	{"monitoring", "the monitoring platform", kebab, []catalogEntity{
		ent("alert", "A notification fired when a metric crosses a threshold.", str("monitor_id", "The monitor that fired."), str("severity", "Severity.", "critical", "warning", "info"), typed("boolean", "acknowledged", "Whether someone took it.")),
		ent("dashboard", "A page of graphs of metrics.", str("title", "Dashboard title."), typed("array", "widgets", "Graphs and their queries.")),
		ent("metric", "A time series such as CPU usage or request latency.", str("name", "Metric name, e.g. http.latency.p99."), str("from", "Start of the range."), str("to", "End of the range.")),
		ent("incident", "An outage or degradation being handled, with a timeline and responders.", str("title", "What is broken."), str("severity", "Severity.", "sev1", "sev2", "sev3"), str("commander", "Incident commander.")),
		ent("monitor", "A check that evaluates a query and alerts.", str("query", "Metric query."), typed("number", "threshold", "Alerting threshold."), typed("array", "notify", "Who to notify.")),
		ent("log_pipeline", "A processing pipeline that parses incoming logs.", str("filter", "Logs it applies to."), typed("array", "processors", "Parsing steps.")),
		ent("oncall_schedule", "Who is on call when, in rotation.", str("team", "Team."), str("rotation", "Rotation length.", "daily", "weekly")),
		ent("silence", "A mute of alerts during maintenance.", str("matcher", "Alerts muted."), str("until", "End of the mute.")),
		ent("slo", "A service level objective: a target for reliability over a window.", str("service", "Service name."), typed("number", "target", "Target, e.g. 99.9."), str("window", "Window.", "7d", "30d", "90d")),
		ent("status_page", "The public page that tells customers about outages.", str("name", "Page name."), str("message", "Public update text.")),
	}},
	{"mail", "the email service", entityFirst, []catalogEntity{
		ent("email", "A message sent to or received from recipients, with a subject, body and attachments.", typed("array", "to", "Recipient addresses."), str("subject", "Subject line."), str("body", "Body text or HTML."), typed("array", "cc", "Copied addresses.")),
		ent("draft", "An unsent email being written.", typed("array", "to", "Recipients."), str("subject", "Subject."), str("body", "Body.")),
		ent("template", "Reusable email content with placeholders.", str("name", "Template name."), str("html", "HTML with {{placeholders}}.")),
		ent("campaign", "A marketing email sent to a mailing list on a schedule.", str("name", "Campaign name."), str("list_id", "Audience."), str("send_at", "When to send.")),
		ent("mailing_list", "A list of subscribers that campaigns go to.", str("name", "List name."), typed("boolean", "double_opt_in", "Whether subscribers confirm by email.")),
		ent("subscriber", "An address subscribed to a mailing list.", str("email", "Address."), str("list_id", "List.")),
		ent("filter_rule", "A rule that sorts incoming mail into folders or forwards it.", str("from", "Sender matched."), str("action", "What to do.", "archive", "label", "forward", "delete")),
		ent("attachment", "A file attached to an email.", str("email_id", "The email."), str("filename", "File name.")),
		ent("signature", "Text appended to outgoing emails.", str("html", "Signature HTML.")),
		ent("sender_domain", "A domain verified for sending, with its DKIM and SPF records.", str("domain", "Domain name.")),
	}},
	{"hr", "the HR system", camel, []catalogEntity{
		ent("employee", "A person employed by the company, with a job title, manager and start date.", str("full_name", "Full name."), str("job_title", "Job title."), str("manager_id", "Manager."), str("start_date", "First working day.")),
		ent("team", "A group of employees under a manager.", str("name", "Team name."), str("manager_id", "Manager.")),
		ent("time_off", "A vacation, sick leave or parental leave request.", str("employee_id", "Who is away."), str("kind", "Kind of leave.", "vacation", "sick", "parental"), str("start_date", "First day."), str("end_date", "Last day.")),
		ent("payroll_run", "A salary payment run for a pay period.", str("period", "Pay period, e.g. 2026-11."), typed("boolean", "approved", "Whether finance approved it.")),
		ent("job_opening", "An open position to hire for.", str("title", "Job title."), str("department", "Department."), str("location", "Office or remote.")),
		ent("candidate", "An applicant to a job opening.", str("full_name", "Name."), str("email", "Email."), str("opening_id", "Position applied to.")),
		ent("interview", "A scheduled interview of a candidate.", str("candidate_id", "Candidate."), str("interviewer", "Interviewer."), str("time", "When.")),
		ent("performance_review", "A periodic review of an employee's work, with ratings.", str("employee_id", "Employee reviewed."), typed("integer", "rating", "Rating 1 to 5."), str("summary", "Summary.")),
		ent("benefit", "A health, pension or other plan employees enrol in.", str("name", "Benefit name."), str("provider", "Insurer or fund.")),
		ent("expense_report", "Out-of-pocket costs an employee claims back, with receipts.", str("employee_id", "Who paid."), typed("number", "total", "Amount claimed."), typed("array", "receipts", "Receipt images.")),
	}},
}

// prose is an entity name as prose: "credit_note" is "credit note".
func prose(name string) string { return strings.ReplaceAll(name, "_", " ") }

// idField is the identifier argument of the tools on one record.
func idField(e catalogEntity) catalogField {
	return str(e.name+"_id", fmt.Sprintf("ID of the %s.", prose(e.name)))
}

// catalogOp is one of the ten operations each entity has.
type catalogOp struct {
	verb string
	tool func(d catalogDomain, e catalogEntity) (desc string, props []catalogField, required []string)
}

// catalogOps are the operations, in tool order.
var catalogOps = []catalogOp{
	{"create", func(d catalogDomain, e catalogEntity) (string, []catalogField, []string) {
		return fmt.Sprintf("Create a new %s in %s. %s Returns the new %s with its ID.", prose(e.name), d.product, e.about, prose(e.name)),
			e.fields, []string{e.fields[0].name}
	}},
	{"get", func(d catalogDomain, e catalogEntity) (string, []catalogField, []string) {
		return fmt.Sprintf("Get one %s of %s by its ID, with all its fields.", prose(e.name), d.product),
			[]catalogField{idField(e), typed("array", "expand", "Related records to include.")}, []string{e.name + "_id"}
	}},
	{"update", func(d catalogDomain, e catalogEntity) (string, []catalogField, []string) {
		return fmt.Sprintf("Update an existing %s in %s. Only the fields given change.", prose(e.name), d.product),
			append([]catalogField{idField(e)}, e.fields...), []string{e.name + "_id"}
	}},
	{"delete", func(d catalogDomain, e catalogEntity) (string, []catalogField, []string) {
		return fmt.Sprintf("Delete a %s from %s permanently. This cannot be undone.", prose(e.name), d.product),
			[]catalogField{idField(e), typed("boolean", "confirm", "Must be true.")}, []string{e.name + "_id", "confirm"}
	}},
	{"list", func(d catalogDomain, e catalogEntity) (string, []catalogField, []string) {
		return fmt.Sprintf("List the %s of %s, a page at a time, newest first.", prose(e.plural), d.product),
			[]catalogField{typed("integer", "limit", "Page size, 1 to 100."), str("cursor", "Cursor of the next page, from the previous answer."),
				str("order", "Sort order.", "asc", "desc")}, nil
	}},
	{"search", func(d catalogDomain, e catalogEntity) (string, []catalogField, []string) {
		return fmt.Sprintf("Search %s in %s by text and by the value of their fields.", prose(e.plural), d.product),
			append([]catalogField{str("q", "Free-text query.")}, e.fields...), []string{"q"}
	}},
	{"archive", func(d catalogDomain, e catalogEntity) (string, []catalogField, []string) {
		return fmt.Sprintf("Archive a %s: it is hidden from lists and searches of %s but kept.", prose(e.name), d.product),
			[]catalogField{idField(e), str("reason", "Why it is archived.")}, []string{e.name + "_id"}
	}},
	{"restore", func(d catalogDomain, e catalogEntity) (string, []catalogField, []string) {
		return fmt.Sprintf("Restore an archived %s of %s.", prose(e.name), d.product),
			[]catalogField{idField(e)}, []string{e.name + "_id"}
	}},
	{"export", func(d catalogDomain, e catalogEntity) (string, []catalogField, []string) {
		return fmt.Sprintf("Export %s from %s to a CSV or JSON file, and return its download URL.", prose(e.plural), d.product),
			[]catalogField{str("format", "File format.", "csv", "json"), str("since", "Only records changed since this date.")}, []string{"format"}
	}},
	{"count", func(d catalogDomain, e catalogEntity) (string, []catalogField, []string) {
		groups := make([]string, len(e.fields))
		for i, fl := range e.fields {
			groups[i] = fl.name
		}
		return fmt.Sprintf("Count %s of %s, optionally grouped by a field, for reports.", prose(e.plural), d.product),
			[]catalogField{str("group_by", "Field to group the counts by.", groups...), str("since", "Only records created since this date.")}, nil
	}},
}

// CatalogDomains returns the names of the products of [Server.AddCatalog]:
// "crm", "billing", "tracker", "chat", "calendar", "drive", "warehouse",
// "monitoring", "mail" and "hr".
func CatalogDomains() []string {
	out := make([]string, len(catalogDomains))
	for i, d := range catalogDomains {
		out[i] = d.name
	}
	return out
}

// CatalogToolName returns the name that [Server.AddCatalog] gives the tool
// of verb ("create", "get", "update", "delete", "list", "search",
// "archive", "restore", "export", "count") on entity in domain, in that
// product's naming style: "create_deal", "createInvoice", "create-issue",
// "event_create".
func CatalogToolName(domain, verb, entity string) string {
	for _, d := range catalogDomains {
		if d.name == domain {
			return d.style(verb, entity)
		}
	}
	panic("testserver: no catalog domain " + domain)
}

// AddCatalog adds the 100 tools of the product domain (one of
// [CatalogDomains]) and returns s: ten entities, each with ten operations,
// with descriptions, argument descriptions, enums and required arguments.
// Every tool answers "ok: <tool> <arguments>", and counts in [Server.Runs].
// It panics on an unknown domain.
func (s *Server) AddCatalog(domain string) *Server {
	for _, t := range CatalogTools(domain) {
		name := t.Name
		s.addTool(t, func(_ context.Context, req *mcp.CallToolRequest, _ map[string]any) (*mcp.CallToolResult, error) {
			return text(fmt.Sprintf("ok: %s %s", name, req.Params.Arguments)), nil
		})
	}
	return s
}

// CatalogTools returns the descriptors of [Server.AddCatalog], in order.
func CatalogTools(domain string) []*mcp.Tool {
	for _, d := range catalogDomains {
		if d.name != domain {
			continue
		}
		var out []*mcp.Tool
		for _, e := range d.entities {
			for _, op := range catalogOps {
				desc, props, required := op.tool(d, e)
				out = append(out, &mcp.Tool{
					Name:        d.style(op.verb, e.name),
					Description: desc,
					InputSchema: catalogSchema(props, required),
					Annotations: &mcp.ToolAnnotations{ReadOnlyHint: op.verb == "get" || op.verb == "list" || op.verb == "search" || op.verb == "count" || op.verb == "export"},
				})
			}
		}
		return out
	}
	panic("testserver: no catalog domain " + domain)
}

// catalogSchema is the input schema of props, with required.
func catalogSchema(props []catalogField, required []string) map[string]any {
	properties := make(map[string]any, len(props))
	for _, p := range props {
		schema := map[string]any{"type": p.typ, "description": p.desc}
		switch {
		case len(p.enum) > 0:
			enum := make([]any, len(p.enum))
			for i, v := range p.enum {
				enum[i] = v
			}
			schema["enum"] = enum
		case p.typ == "array":
			schema["items"] = map[string]any{"type": "string"}
		case p.name == "limit":
			schema["minimum"], schema["maximum"], schema["default"] = 1, 100, 20
		}
		properties[p.name] = schema
	}
	schema := map[string]any{"type": "object", "properties": properties, "additionalProperties": false}
	if len(required) > 0 {
		req := make([]any, len(required))
		for i, r := range required {
			req[i] = r
		}
		schema["required"] = req
	}
	return schema
}
